"""A backend object handed to launched code by the launch wrapper itself (project mode):
``backend.launch(_worker, ...)`` where ``TPUBackend.launch(self, fn, *args)`` calls
``torch_xla.launch(fn, args=(self, *args))``, so ``_worker(index, backend, ...)``'s
``backend`` is a ``TPUBackend``, and ``backend.m(...)`` runs ``TPUBackend.m`` (own or
inherited). Unknown (no ``self`` in the args, two wrapper classes of one name, a direct call
of the launched function) never fires."""

from __future__ import annotations

import pytest

from flake8_xla import project
from flake8_xla.settings import Settings
from test_project_mode import lint, lint_all, write


#: each test starts and ends with an empty project cache (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("fresh_project_cache")


BACKENDS = '''\
import torch


class Backend:
    def __init__(self):
        self.rank = 0

    def launch(self, fn, *args):
        fn(0, self, *args)

    def device(self):
        return torch.device("cpu")

    def prepare_model(self, model):
        return model.to(self.device())

    def backward(self, loss):
        loss.backward()

    def optimizer_step(self, optimizer):
        optimizer.step()

    def is_main(self):
        return self.rank == 0

    def save(self, state, path):
        if self.is_main():
            torch.save(state, path)


def get_backend(name):
    if name == "tpu":
        from .tpu import TPUBackend

        return TPUBackend()
    return Backend()
'''

TPU = '''\
import torch_xla
import torch_xla.core.xla_model as xm

from .backends import Backend


class TPUBackend(Backend):
    def launch(self, fn, *args):
        torch_xla.launch(fn, args=(self, *args))

    def device(self):
        return torch_xla.device()

    def optimizer_step(self, optimizer):
        xm.optimizer_step(optimizer)
'''

LOOP = '''\
import torch
import torch.nn.functional as F

from .backends import get_backend


def fit(model, loader, name):
    backend = get_backend(name)
    backend.launch(_worker, model, loader)


def _worker(index, backend, model, loader):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model = backend.prepare_model(model)
    for x, y in loader:
        loss = F.cross_entropy(model(x), y)
        backend.backward(loss)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        backend.optimizer_step(optimizer)
        print(loss.item())
    backend.save({"model": model.state_dict(), "step": 1}, "last.pt")
'''

#: the optimizer built before the inherited prepare_model moves to TPUBackend.device(); the
#: clip before TPUBackend.optimizer_step (xm.optimizer_step); the loss read every step; the
#: inherited Backend.save torch.saves the state of the XLA model _worker hands it
WANT = {("lib/loop.py", 13, "XLA405"), ("lib/loop.py", 18, "XLA203"), ("lib/loop.py", 20, "XLA501"),
        ("lib/backends.py", 28, "XLA601")}
SAVE = ("lib/backends.py", 28, "XLA601")


def make(base, backends=BACKENDS, tpu=TPU, loop=LOOP, extra=None):
    files = {"pyproject.toml": "", "lib/__init__.py": "", "lib/backends.py": backends, "lib/tpu.py": tpu,
             "lib/loop.py": loop}
    files.update(extra or {})
    write(base, files)


def test_the_wrappers_self_is_the_backend_in_launched_code(tmp_path):
    make(tmp_path)
    assert lint_all(tmp_path) == WANT
    project.clear_cache()
    assert lint(tmp_path, "lib/loop.py") == WANT - {SAVE}  # each alone, by its path
    project.clear_cache()
    assert lint(tmp_path, "lib/backends.py") == {SAVE}


def test_wrapper_facts_name_the_class_and_the_position(tmp_path):
    from flake8_xla.project import _project, launcher_selves_for

    make(tmp_path)
    files = _project(tmp_path.resolve())
    tpu = str((tmp_path / "lib/tpu.py").resolve())
    assert launcher_selves_for((tmp_path / "lib/loop.py").resolve(), files) == (("launch", (tpu, "TPUBackend"), 0),)
    # args=(cfg, self, *args): self second; args=args: unknown (-1)
    project.clear_cache()
    make(tmp_path, tpu=TPU.replace("args=(self, *args)", "args=(None, self, *args)"))
    assert launcher_selves_for((tmp_path / "lib/loop.py").resolve(), _project(tmp_path.resolve())) == (
        ("launch", (tpu, "TPUBackend"), 1),)
    project.clear_cache()
    make(tmp_path, tpu=TPU.replace("args=(self, *args)", "args=args"))
    assert launcher_selves_for((tmp_path / "lib/loop.py").resolve(), _project(tmp_path.resolve())) == (
        ("launch", (tpu, "TPUBackend"), -1),)


def test_a_wrapper_without_self_in_the_args_is_unknown(tmp_path):
    make(tmp_path, tpu=TPU.replace("args=(self, *args)", "args=args"))
    assert lint_all(tmp_path) == set()


def test_self_at_another_position_is_another_parameter(tmp_path):
    # _worker(index, backend, model, loader) gets (index, None, backend-self, ...): backend is None
    make(tmp_path, tpu=TPU.replace("args=(self, *args)", "args=(None, self, *args)"))
    assert lint_all(tmp_path) == set()


def test_a_direct_call_of_the_launched_function_is_unknown(tmp_path):
    make(tmp_path, loop=LOOP + "\n\ndef debug(model, loader):\n    _worker(0, None, model, loader)\n")
    assert lint_all(tmp_path) == set()


def test_two_wrapper_classes_of_one_name_are_unknown(tmp_path):
    tpu2 = TPU.replace("TPUBackend", "TPU2Backend")
    backends = BACKENDS.replace('    if name == "tpu":\n',
                                '    if name == "tpu2":\n        from .tpu2 import TPU2Backend\n\n'
                                '        return TPU2Backend()\n    if name == "tpu":\n')
    make(tmp_path, backends=backends, extra={"lib/tpu2.py": tpu2})
    assert lint_all(tmp_path) == set()


def test_a_step_helper_that_reduces_first_is_no_xla203(tmp_path):
    tpu = TPU.replace("        xm.optimizer_step(optimizer)",
                      "        xm.reduce_gradients(optimizer)\n        optimizer.step()")
    make(tmp_path, tpu=tpu)
    assert lint_all(tmp_path) == WANT - {("lib/loop.py", 18, "XLA203")}


def test_xla203_on_a_helper_step_has_no_autofix(tmp_path):
    make(tmp_path)
    found = [f for f in _findings(tmp_path, "lib/loop.py") if f.code == "XLA203"]
    assert [f.line for f in found] == [18]
    assert found[0].message == ("clip_grad_norm_ before backend.optimizer_step (tpu.py: xm.optimizer_step) clips "
                                "unreduced gradients; reduce first: xm.reduce_gradients(optimizer), clip, step")
    text = (tmp_path / "lib/loop.py").read_text()
    result = _fix(tmp_path, "lib/loop.py", "XLA203")
    assert (result.source, result.fixed, result.remaining) == (text, 0, 1)  # the step is in tpu.py: rewriting this call site would change every backend


def test_prepare_model_is_a_move_only_where_the_class_moves(tmp_path):
    # the optimizer built after the move; a TPUBackend whose prepare_model returns the model as is
    after = LOOP.replace("    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n    model = backend.prepare_model(model)\n",
                         "    model = backend.prepare_model(model)\n    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n")
    make(tmp_path, loop=after)
    assert lint_all(tmp_path) == {("lib/loop.py", 18, "XLA203"), ("lib/loop.py", 20, "XLA501"), SAVE}
    project.clear_cache()
    make(tmp_path, tpu=TPU + "\n    def prepare_model(self, model):\n        return model\n")
    assert lint_all(tmp_path) == WANT - {("lib/loop.py", 13, "XLA405"), SAVE}
    project.clear_cache()
    # TPUBackend.device() not the XLA device: the inherited move is no move to XLA
    make(tmp_path, tpu=TPU.replace("return torch_xla.device()", 'return "cpu"'))
    assert lint_all(tmp_path) == WANT - {("lib/loop.py", 13, "XLA405"), SAVE}


def test_single_file_mode_knows_no_backend(tmp_path):
    make(tmp_path)
    assert lint(tmp_path, "lib/loop.py", Settings(project="off")) == set()


def _findings(base, rel):
    import ast
    import os

    from flake8_xla import engine

    path = base / rel
    text = path.read_text(encoding="utf-8")
    old = os.getcwd()
    os.chdir(base)
    try:
        return engine.run(ast.parse(text), Settings(), text, filename=rel)
    finally:
        os.chdir(old)


def test_inherited_methods_are_reached_overridden_ones_are_not(tmp_path):
    # Backend.optimizer_step (line 21, optimizer.step()) is overridden by TPUBackend: not reached;
    # nor is Backend.device: the inherited prepare_model's self.device() runs on a TPUBackend,
    # which overrides it (dispatch on the class of the object, not the base's own method)
    make(tmp_path)
    facts = project.facts_for(str(tmp_path / "lib/backends.py"), Settings())
    assert sorted(facts.reached) == ["Backend.backward", "Backend.is_main", "Backend.prepare_model", "Backend.save"]
    assert facts.dispatch["Backend.prepare_model"] == {"device": ((str((tmp_path / "lib/tpu.py").resolve()),
                                                                  "TPUBackend.device"),)}
    assert facts.dispatch["Backend.save"] == {"is_main": (("", "Backend.is_main"),)}
    assert facts.callers["Backend.save"] == "lib/loop.py"


def test_the_state_passed_to_save_decides_xla601(tmp_path):
    # a CPU copy, and a state with no module's state_dict(): torch.save is fine
    make(tmp_path, loop=LOOP.replace('{"model": model.state_dict(), "step": 1}', '{"model": model.cpu().state_dict()}'))
    assert lint_all(tmp_path) == WANT - {SAVE}
    project.clear_cache()
    make(tmp_path, loop=LOOP.replace('{"model": model.state_dict(), "step": 1}', '{"step": 1}'))
    assert lint_all(tmp_path) == WANT - {SAVE}
    project.clear_cache()
    # through a name; and a TPUBackend that saves its own way never runs Backend.save
    make(tmp_path, loop=LOOP.replace('    backend.save({"model": model.state_dict(), "step": 1}, "last.pt")',
                                     '    state = {"model": model.state_dict()}\n    backend.save(state, "last.pt")'))
    assert lint_all(tmp_path) == WANT
    project.clear_cache()
    own = TPU + "\n    def save(self, state, path):\n        xm.save(state, path)\n"
    make(tmp_path, tpu=own)
    assert lint_all(tmp_path) == WANT - {SAVE}


def test_the_save_state_argument_facts(tmp_path):
    from flake8_xla.project import _project, summary_of

    make(tmp_path)
    s = summary_of((tmp_path / "lib/loop.py").resolve(), _project(tmp_path.resolve()), Settings())
    tpu = str((tmp_path / "lib/tpu.py").resolve())
    save = next(d for d in s.dispatches if d.method == "save")
    assert (save.origin, save.param, save.classes) == ("_worker", "backend", ((tpu, "TPUBackend"),))
    assert (save.args[0].kind, save.args[0].refs) == ("state_dict", ((tpu, "TPUBackend.prepare_model"),))
    assert (tpu, "TPUBackend.save") in s.function("_worker").calls_out


@pytest.mark.parametrize("name, want", [
    ('"tpu"', {("lib/loop.py", 14, "XLA405"), ("lib/loop.py", 19, "XLA203"), ("lib/loop.py", 21, "XLA501")}),
    ("unused.backend", set()),
])
def test_a_backend_from_a_factory_is_the_branch_its_constant_picks(tmp_path, name, want):
    # get_backend(name) returns one of two classes: with the constant "tpu" the TPUBackend
    # branch (its inherited prepare_model moves to the XLA device after the optimizer was
    # built: XLA405; the clip before its xm.optimizer_step: XLA203; the loss read every
    # step: XLA501); with a value not seen, what
    # backend.m() runs is not seen
    loop = LOOP.replace("def _worker(index, backend, model, loader):\n",
                        f"def _worker(index, unused, model, loader):\n    backend = get_backend({name})\n")
    make(tmp_path, loop=loop)
    assert lint_all(tmp_path) == want


def test_xla203_before_an_imported_step_helper(tmp_path):
    # a plain function of another module that calls xm.optimizer_step is the reducing step
    train = (
        "import torch\nimport torch_xla\nfrom steps import step\n\n\n"
        "def _mp_fn(index, loader):\n"
        "    model = torch.nn.Linear(2, 2).to(torch_xla.device())\n"
        "    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "    for x in loader:\n"
        "        model(x).sum().backward()\n"
        "        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n"
        "        step(opt)\n\n\n"
        "if __name__ == '__main__':\n"
        "    torch_xla.launch(_mp_fn, args=(None,))\n")
    steps = "import torch_xla.core.xla_model as xm\n\n\ndef step(opt):\n    xm.optimizer_step(opt)\n"
    write(tmp_path, {"pyproject.toml": "", "train.py": train, "steps.py": steps})
    assert lint_all(tmp_path) == {("train.py", 11, "XLA203")}
    project.clear_cache()
    write(tmp_path, {"steps.py": steps.replace("    xm.optimizer_step(opt)", "    opt.step()")})
    assert lint_all(tmp_path) == set()


def _fix(base, rel, code):
    import os

    from flake8_xla.fix.fixer import fix_source

    text = (base / rel).read_text()
    old = os.getcwd()
    os.chdir(base)
    try:
        return fix_source(text, Settings(), rel, unsafe=True, is_selected=lambda c: c == code, filename=rel)
    finally:
        os.chdir(old)


def test_xla405_fix_builds_the_optimizer_after_the_helpers_move(tmp_path):
    make(tmp_path)
    result = _fix(tmp_path, "lib/loop.py", "XLA405")
    assert (result.fixed, result.remaining) == (1, 0)
    assert result.source == LOOP.replace(
        "    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n    model = backend.prepare_model(model)\n",
        "    model = backend.prepare_model(model)\n    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n")
