"""Project mode (``xla-project``): the project layer (root, imports resolved to files, the
summary cache, the reverse-import index) and reach across modules through every front end."""

from __future__ import annotations

import ast
import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest

from flake8_xla import engine, project
from flake8_xla.project import files as pfiles
from flake8_xla.project import summary as psummary
from flake8_xla.project.files import ProjectFiles, find_root
from flake8_xla.settings import Settings, SettingsError, build, from_options

TRAIN = """\
import torch_xla
import torch_xla.distributed.xla_multiprocessing as xmp
from utils import helper


def _run(index):
    helper()


if __name__ == "__main__":
    xmp.spawn(_run)
"""

UTILS = """\
import torch


def helper():
    torch.cuda.empty_cache()


def cpu_only():
    torch.cuda.empty_cache()
"""

CPU = """\
from utils import cpu_only

cpu_only()
"""

#: utils.helper is reached from the launched _run of train.py; cpu_only only from a CPU script
WANT = {("utils.py", 5, "XLA401")}


def write(base: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = base / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


#: each test starts and ends with an empty project cache (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("fresh_project_cache")


def lint(base: Path, rel: str, settings: Settings | None = None, cwd: Path | None = None) -> set:
    """(file, line, code) of the engine's findings on ``base/rel``, linted by its path."""
    path = base / rel
    text = path.read_text(encoding="utf-8")
    old = os.getcwd()
    os.chdir(cwd or base)
    try:
        found = engine.run(ast.parse(text), settings or Settings(), text, filename=os.path.relpath(path))
    finally:
        os.chdir(old)
    return {(rel, f.line, f.code) for f in found}


def lint_all(base: Path, settings: Settings | None = None) -> set:
    out = set()
    for path in sorted(base.rglob("*.py")):
        out |= lint(base, path.relative_to(base).as_posix(), settings)
    return out


def flat_project(base: Path) -> None:
    write(base, {"pyproject.toml": "", "train.py": TRAIN, "utils.py": UTILS, "cpu_eval.py": CPU})


# --- the project layer --------------------------------------------------------------------

def test_root_is_nearest_marked_folder(tmp_path):
    write(tmp_path, {"a/setup.cfg": "", "a/b/c/m.py": "", "x/y/m.py": "", "g/.git/HEAD": "", "g/s/m.py": ""})
    assert find_root(tmp_path / "a/b/c/m.py") == tmp_path / "a"
    assert find_root(tmp_path / "g/s/m.py") == tmp_path / "g"
    # no marker up to the filesystem root: the file's own folder (tmp_path has none above it
    # unless the machine's /tmp does, so only check the answer is the folder or above it)
    assert (tmp_path / "x/y").is_relative_to(find_root(tmp_path / "x/y/m.py"))


def test_imports_resolve_like_python(tmp_path):
    write(tmp_path, {
        "pyproject.toml": "", "train.py": "", "utils.py": "",
        "trainer/__init__.py": "", "trainer/engine.py": "", "trainer/data.py": "",
        "src/lib/__init__.py": "", "src/lib/core.py": "", "ns/mod.py": "",
        ".venv/lib/site-packages/torchvision/__init__.py": "", "build/lib/utils2.py": "",
    })
    files = ProjectFiles(tmp_path)
    train, engine_py = tmp_path / "train.py", tmp_path / "trainer/engine.py"
    assert files.resolve_module(train, "utils") == tmp_path / "utils.py"
    assert files.resolve_module(train, "trainer.engine") == engine_py
    assert files.resolve_module(train, "trainer") == tmp_path / "trainer/__init__.py"
    assert files.resolve_module(engine_py, "data", 1) == tmp_path / "trainer/data.py"
    assert files.resolve_module(engine_py, "", 1) == tmp_path / "trainer/__init__.py"
    assert files.resolve_module(train, "lib.core") == tmp_path / "src/lib/core.py"
    assert files.resolve_module(train, "ns.mod") == tmp_path / "ns/mod.py"
    assert files.submodule(tmp_path / "trainer/__init__.py", "data") == tmp_path / "trainer/data.py"
    # not project files: unknown
    assert files.resolve_module(train, "torchvision") is None
    assert files.resolve_module(train, "missing.module") is None
    assert files.resolve_module(engine_py, "x", 3) is None  # above the root
    listed = {p.relative_to(tmp_path).as_posix() for p in files.files()}
    assert listed == {"train.py", "utils.py", "trainer/__init__.py", "trainer/engine.py", "trainer/data.py",
                      "src/lib/__init__.py", "src/lib/core.py", "ns/mod.py"}


def test_reverse_index_reads_every_import_spelling(tmp_path):
    write(tmp_path, {
        "pyproject.toml": "", "utils.py": "", "pkg/__init__.py": "", "pkg/a.py": "", "pkg/b.py": "",
        "one.py": "import utils\n", "two.py": "from pkg import (\n    a,\n    b as bee,\n)\n",
        "three.py": "import pkg.b as pb, os\n", "pkg/c.py": "from .a import x\nfrom . import b\n",
        "four.py": "x = 'import utils'  # in a string: a candidate only, confirmed by the parse\n",
    })
    files = ProjectFiles(tmp_path)
    names = lambda p: {q.relative_to(tmp_path).as_posix() for q in files.importers(tmp_path / p)}  # noqa: E731
    assert names("utils.py") == {"one.py"}
    assert names("pkg/a.py") == {"two.py", "pkg/c.py"}
    assert names("pkg/b.py") == {"two.py", "three.py", "pkg/c.py"}


def test_summaries_are_plain_facts_without_trees(tmp_path):
    flat_project(tmp_path)
    files = ProjectFiles(tmp_path)
    s = project.summary_of(tmp_path / "train.py", files, Settings())
    assert s.launched_multi == ("_run",) and s.uses_torch_xla
    assert s.function("_run").calls_out == ((str(tmp_path / "utils.py"), "helper"),)

    def no_tree(value):
        if isinstance(value, ast.AST):
            raise AssertionError(value)
        if dataclasses.is_dataclass(value):
            for f in dataclasses.fields(value):
                no_tree(getattr(value, f.name))
        elif isinstance(value, (tuple, list)):
            for v in value:
                no_tree(v)

    no_tree(s)
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.uses_torch_xla = False


def test_each_module_read_once_per_state(tmp_path, monkeypatch):
    flat_project(tmp_path)
    built = []
    real = psummary.summarise
    monkeypatch.setattr(project, "summarise", lambda path, *a: built.append(path.name) or real(path, *a))
    first = lint_all(tmp_path)
    # the module that launches (its text names torch and a launch), and utils.py where its
    # launched code calls: each once; cpu_eval.py never mentions torch and is never parsed
    assert sorted(built) == ["train.py", "utils.py"]
    assert lint_all(tmp_path) == first and len(built) == 2
    # a changed file (size and mtime) is a new summary
    (tmp_path / "train.py").write_text(TRAIN + "\n# changed\n", encoding="utf-8")
    files = project._project(find_root(tmp_path / "train.py"))
    assert project.summary_of(tmp_path / "train.py", files, Settings()).launched_multi == ("_run",)
    assert sorted(built) == ["train.py", "train.py", "utils.py"]


# --- reach ----------------------------------------------------------------------------------

def test_reached_helper_is_xla_code_cpu_helper_stays_plain(tmp_path):
    flat_project(tmp_path)
    assert lint_all(tmp_path) == WANT
    assert lint_all(tmp_path, Settings(project="off")) == set()


def test_reach_through_packages_classes_reexports_and_bases(tmp_path):
    write(tmp_path, {
        "setup.py": "",
        "src/app/__init__.py": "from .loop import fit\n",
        "src/app/base.py": "import torch\n\n\nclass Base:\n    def free(self):\n        torch.cuda.empty_cache()\n"
                           "\n    def step(self):\n        torch.cuda.synchronize()\n",
        "src/app/runner.py": "import torch\nfrom .base import Base\n\n\nclass Runner(Base):\n"
                             "    def step(self):\n        pass\n",
        "src/app/loop.py": "from .runner import Runner\n\n\ndef fit():\n    r = Runner()\n    r.free()\n",
        "launch.py": "import torch_xla\nimport app\n\n\ndef _mp(i):\n    app.fit()\n\n\n"
                     "torch_xla.launch(_mp)\n",
    })
    # Runner inherits free (XLA401 in base.py) and overrides step: Base.step stays plain
    assert lint_all(tmp_path) == {("src/app/base.py", 6, "XLA401")}


def test_unknown_never_fires(tmp_path):
    """Imports that resolve to no project file, a module that does not parse, an import cycle."""
    write(tmp_path, {
        "pyproject.toml": "",
        "train.py": "import torch_xla\nimport torch_xla.distributed.xla_multiprocessing as xmp\n"
                    "import utils\nimport broken\nfrom torchvision import helper\n\n\n"
                    "def _run(i):\n    utils.helper()\n    broken.f()\n    helper()\n\n\nxmp.spawn(_run)\n",
        "broken.py": "import torch\nimport train\n\n\ndef f(:\n",
        "utils.py": "import torch\nimport train  # a cycle\n\n\ndef helper():\n    torch.cuda.empty_cache()\n",
        ".venv/lib/site-packages/torchvision/__init__.py":
            "import torch\n\n\ndef helper():\n    torch.cuda.empty_cache()\n",
    })
    assert lint(tmp_path, "utils.py") == {("utils.py", 6, "XLA401")}
    assert lint(tmp_path, ".venv/lib/site-packages/torchvision/__init__.py") == set()


def test_file_without_torch_in_a_plain_project_stays_on_the_fast_path(tmp_path, monkeypatch):
    """No module of the project names torch_xla: one bytes search per root, no summary, no
    reach index, whatever the number of files linted."""
    write(tmp_path, {"pyproject.toml": "", "a.py": "import torch\n\n\ndef f():\n    torch.cuda.empty_cache()\n",
                     "b.py": "from a import f\n\n\ndef g():\n    f()\n", "c.py": "import b\n\nb.g()\n"})
    monkeypatch.setattr(project, "facts_for", lambda *a: pytest.fail("project facts asked"))
    monkeypatch.setattr(engine, "facts_for", lambda *a: pytest.fail("project facts asked"))
    searched = []
    real = project._names_xla
    monkeypatch.setattr(project, "_names_xla", lambda p, *a: searched.append(p.name) or real(p, *a))
    assert lint(tmp_path, "b.py") == set() and lint(tmp_path, "c.py") == set()
    assert sorted(searched) == ["a.py", "b.py", "c.py"]  # once per root, not per linted file


def test_file_without_torch_reached_by_xla_code_is_xla_code(tmp_path):
    """A callbacks module that never mentions torch, whose method the launched trainer calls
    through a list of callbacks, is linted as XLA code (XLA604: the local-master test of a
    helper); the same code in a module no XLA code reaches stays silent."""
    body = ("from helpers import is_main\n\n\nclass Logger:\n    def on_begin(self):\n"
            "        if is_main():\n            import wandb\n\n            wandb.init(project='p')\n")
    write(tmp_path, {
        "pyproject.toml": "",
        "helpers.py": "import torch_xla.core.xla_model as xm\n\n\ndef is_main():\n    return xm.is_master_ordinal()\n",
        "callbacks.py": body,
        "cpu_only.py": body,
        "train.py": "import torch_xla\nimport torch_xla.distributed.xla_multiprocessing as xmp\n"
                    "from callbacks import Logger\n\n\ndef _run(index):\n    cbs = [Logger()]\n    for cb in cbs:\n"
                    "        cb.on_begin()\n\n\nif __name__ == '__main__':\n    xmp.spawn(_run)\n",
    })
    assert lint(tmp_path, "callbacks.py") == {("callbacks.py", 6, "XLA604")}
    assert lint(tmp_path, "cpu_only.py") == set()
    assert lint_all(tmp_path) == {("callbacks.py", 6, "XLA604")}


def test_project_errors_never_crash(tmp_path, monkeypatch):
    flat_project(tmp_path)

    def boom(*a):
        raise RecursionError

    monkeypatch.setattr(project, "summarise", boom)
    assert lint(tmp_path, "utils.py") == set()


def test_no_filename_is_the_module_alone(tmp_path):
    flat_project(tmp_path)
    text = (tmp_path / "utils.py").read_text()
    assert engine.run(ast.parse(text), Settings(), text) == []
    assert engine.run(ast.parse(text), Settings(), text, filename="stdin") == []


# --- options and front ends -----------------------------------------------------------------

def test_option_values():
    assert Settings().project == "on"
    assert from_options({"xla-project": "OFF"}).project == "off"
    assert build().project == "on"
    with pytest.raises(SettingsError, match=r"^option --xla-project: invalid value 'maybe' \(choose from 'on', 'off'\)$"):
        from_options({"xla-project": "maybe"})


def _hosts(cwd: Path, args: list[str], target: str) -> dict[str, subprocess.CompletedProcess]:
    run = lambda cmd, **kw: subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, timeout=300, **kw)  # noqa: E731
    return {
        "flake8": run([sys.executable, "-m", "flake8", "--isolated", "--select=XLA", *args, target]),
        "pylint": run([sys.executable, "-m", "pylint", "--load-plugins=flake8_xla.pylint_plugin", "--disable=all",
                       "--enable=xla", "--persistent=n", "--score=n", "--msg-template={path}:{line}:{msg}",
                       *args, target]),
        "flake8-xla": run([sys.executable, "-m", "flake8_xla", "--isolated", *args, target]),
    }


def test_every_front_end_same_and_option_turns_it_off(tmp_path):
    flat_project(tmp_path)
    for host, proc in _hosts(tmp_path, [], "utils.py").items():
        got = [line for line in proc.stdout.splitlines() if "XLA" in line]
        assert len(got) == 1 and got[0].startswith("utils.py:5:") and "XLA401" in got[0], (host, proc.stdout)
    for host, proc in _hosts(tmp_path, ["--xla-project=off"], "utils.py").items():
        assert "XLA" not in proc.stdout and not proc.stderr.strip(), (host, proc.stdout, proc.stderr)
    # the same key in the config files
    write(tmp_path, {"setup.cfg": "[flake8]\nxla-project = off\n"})
    proc = subprocess.run([sys.executable, "-m", "flake8", "--select=XLA", "utils.py"], capture_output=True,
                          text=True, cwd=tmp_path)
    assert proc.stdout == "" and proc.returncode == 0
    (tmp_path / "setup.cfg").unlink()
    write(tmp_path, {"pyproject.toml": '[tool.flake8-xla]\nxla-project = "off"\n'})
    proc = subprocess.run([sys.executable, "-m", "flake8_xla", "utils.py"], capture_output=True, text=True,
                          cwd=tmp_path)
    assert proc.stdout == "" and proc.returncode == 0, proc.stderr


def test_stdin_reads_the_project_only_with_a_file_name(tmp_path):
    flat_project(tmp_path)
    text = (tmp_path / "utils.py").read_text()
    run = lambda *a: subprocess.run([sys.executable, "-m", "flake8_xla", *a], input=text,  # noqa: E731
                                    capture_output=True, text=True, cwd=tmp_path)
    assert run("-").stdout == ""
    named = run("--stdin-filename=utils.py", "-").stdout
    assert named.startswith("utils.py:5:") and "XLA401" in named


def test_flake8_jobs_same_as_serial(tmp_path):
    flat_project(tmp_path)
    cmd = [sys.executable, "-m", "flake8", "--isolated", "--select=XLA", "train.py", "utils.py", "cpu_eval.py"]
    serial = subprocess.run([*cmd, "-j1"], capture_output=True, text=True, cwd=tmp_path).stdout
    parallel = subprocess.run([*cmd, "-j2"], capture_output=True, text=True, cwd=tmp_path).stdout
    assert serial == parallel and serial.startswith("utils.py:5:")


def test_scanning_skips_environments_and_hidden_folders(tmp_path):
    write(tmp_path, {"pyproject.toml": "", "a.py": "", **{f"{d}/x.py": "" for d in sorted(pfiles.SKIP_DIRS)},
                     ".hidden/y.py": "", "pkg/node_modules/z.py": ""})
    assert [p.name for p in ProjectFiles(tmp_path).files()] == ["a.py"]


def test_launch_through_a_wrapper_of_another_module(tmp_path):
    """`backend.launch(_worker)` where a project module's `launch(self, fn, ...)` hands `fn` to
    torch_xla.launch: `_worker` and what it calls are XLA code; the module's other code is not."""
    write(tmp_path, {
        "pyproject.toml": "",
        "lib/__init__.py": "",
        "lib/tpu.py": "import torch_xla\n\n\nclass TPU:\n    def launch(self, fn, *args):\n"
                      "        torch_xla.launch(fn, args=(self, *args))\n",
        "lib/loop.py": "import torch\nfrom .tpu import TPU\n\n\ndef free():\n    torch.cuda.empty_cache()\n\n\n"
                       "def cpu_tool():\n    torch.cuda.empty_cache()\n\n\n"
                       "def _worker(index, backend):\n    free()\n\n\n"
                       "def fit():\n    TPU().launch(_worker)\n",
    })
    assert lint_all(tmp_path) == {("lib/loop.py", 6, "XLA401")}
    assert lint_all(tmp_path, Settings(project="off")) == set()


def test_finding_caused_by_another_module_names_it(tmp_path, monkeypatch):
    """A save helper of a module without torch_xla, given the XLA model by the launched code
    of train.py: XLA601 there, naming the helper and the module that runs it."""
    write(tmp_path, {
        "pyproject.toml": "",
        "train.py": "import torch_xla\nimport torch_xla.distributed.xla_multiprocessing as xmp\n"
                    "from ckpt import save\n\n\ndef _run(index):\n    model = Net().to(torch_xla.device())\n"
                    "    save(model, 'm.pt')\n\n\nxmp.spawn(_run)\n",
        "ckpt.py": "import torch\n\n\ndef save(model, path):\n    torch.save(model.state_dict(), path)\n",
    })
    text = (tmp_path / "ckpt.py").read_text()
    monkeypatch.chdir(tmp_path)
    found = [f.text for f in engine.run(ast.parse(text), Settings(), text, filename="ckpt.py")]
    assert found == ["XLA601 torch.save of model.state_dict() keeps XLA tensors (in save, run from train.py); "
                     "use xm.save(obj, path)"]
    assert engine.run(ast.parse(text), Settings(project="off"), text, filename="ckpt.py") == []


SPMD = """\
import torch
import torch_xla
import torch_xla.runtime as xr
from data import batches
from shard import place


def main(model, optimizer):
    xr.use_spmd()
    device = torch_xla.device()
    for x in batches(8):
        loss = model(place(x.to(device))).sum()
        loss.backward()
        optimizer.step()
"""


@pytest.mark.parametrize("data,shard,want", [
    # a generator of host tensors, a helper that cannot sync: the loop has no per-step sync
    ("import torch\n\n\ndef batches(n):\n    for _ in range(n):\n        yield torch.randn(4)\n",
     "def place(t):\n    return t\n", {("train.py", 11, "XLA302")}),
    # the helper syncs (in another module, through a call of its own): silent
    ("import torch\n\n\ndef batches(n):\n    for _ in range(n):\n        yield torch.randn(4)\n",
     "from sync import cut\n\n\ndef place(t):\n    cut()\n    return t\n", set()),
    # the generator yields what a parameter holds (may be a device loader's batches): silent
    ("def batches(loader):\n    for b in loader:\n        yield b\n", "def place(t):\n    return t\n", set()),
], ids=["host-generator", "helper-syncs", "unseen-data"])
def test_what_an_imported_helper_does(tmp_path, data, shard, want):
    write(tmp_path, {"pyproject.toml": "", "train.py": SPMD, "data.py": data, "shard.py": shard,
                     "sync.py": "import torch_xla\n\n\ndef cut():\n    torch_xla.sync()\n"})
    assert lint(tmp_path, "train.py") == want
    assert lint(tmp_path, "train.py", Settings(project="off")) == set()


def test_runtime_touched_by_an_imported_helper_before_the_launch(tmp_path, monkeypatch):
    write(tmp_path, {
        "pyproject.toml": "", "pkg/__init__.py": "",
        "pkg/util.py": "import torch_xla.runtime as xr\n\n\ndef count():\n    return xr.world_size()\n\n\n"
                       "def name():\n    return 'x'\n",
        "run.py": "import torch_xla.distributed.xla_multiprocessing as xmp\nfrom pkg.util import count, name\n\n\n"
                  "def _mp(i):\n    pass\n\n\nif __name__ == '__main__':\n    print(name())\n    print(count())\n"
                  "    xmp.spawn(_mp)\n",
    })
    text = (tmp_path / "run.py").read_text()
    monkeypatch.chdir(tmp_path)
    found = [(f.line, f.text) for f in engine.run(ast.parse(text), Settings(), text, filename="run.py")]
    assert found == [(11, "XLA003 count() of pkg/util.py starts the XLA runtime before xmp.spawn(); "
                          "move it into the launched function")]
    assert engine.run(ast.parse(text), Settings(project="off"), text, filename="run.py") == []


LAUNCHED_LOOP = """\
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.xla_multiprocessing as xmp
from torch.utils.data import DataLoader
from ds import Images
from steps import step


def _run(index):
    device = torch_xla.device()
    loader = DataLoader(Images(), batch_size=8)
    for batch in loader:
        step(batch, device, xm)


xmp.spawn(_run)
"""

DS_PLAIN = "from torch.utils.data import Dataset\n\n\nclass Images(Dataset):\n    def __len__(self):\n        return 8\n"
DS_SHARDS = ("import torch_xla.runtime as xr\nfrom torch.utils.data import Dataset\n\n\nclass Images(Dataset):\n"
             "    def __len__(self):\n        return 8 // xr.world_size()\n")
STEP_SYNCS = "def step(batch, model, xm):\n    batch.sum().backward()\n    xm.optimizer_step(model, barrier=True)\n"
STEP_PLAIN = "def step(batch, opt, xm):\n    batch.sum().backward()\n    xm.optimizer_step(opt)\n"


@pytest.mark.parametrize("ds,steps,want", [
    # a map-style dataset class that does not shard, a step helper that syncs on the xm it is given
    (DS_PLAIN, STEP_SYNCS, {("train.py", 11, "XLA303"), ("train.py", 11, "XLA304")}),
    # the same helper without barrier=True: nothing syncs per step over a plain DataLoader
    (DS_PLAIN, STEP_PLAIN, {("train.py", 11, "XLA303"), ("train.py", 11, "XLA304"), ("train.py", 12, "XLA301")}),
    # a dataset class that reads the world size shards itself: no XLA303
    (DS_SHARDS, STEP_SYNCS, {("train.py", 11, "XLA304")}),
], ids=["plain-dataset", "helper-without-barrier", "sharding-dataset"])
def test_step_loop_through_an_imported_helper(tmp_path, ds, steps, want):
    write(tmp_path, {"pyproject.toml": "", "train.py": LAUNCHED_LOOP, "ds.py": ds, "steps.py": steps})
    assert lint(tmp_path, "train.py") == want
    assert lint(tmp_path, "train.py", Settings(project="off")) == set()


def test_local_master_test_returned_by_another_modules_helper(tmp_path):
    """`if is_main_process(): wandb.init(...)` where is_main_process (another module) returns
    xm.is_master_ordinal(): XLA604 in a callback module reached from the launched code."""
    write(tmp_path, {
        "pyproject.toml": "",
        "dist.py": "import torch_xla.core.xla_model as xm\n\n\ndef is_main_process():\n"
                   "    return xm.is_master_ordinal()\n\n\ndef is_global_main():\n"
                   "    return xm.is_master_ordinal(local=False)\n",
        "callbacks.py": "import torch\nimport wandb\nfrom dist import is_global_main, is_main_process\n\n\n"
                        "class Wandb:\n    def begin(self):\n        if is_main_process():\n"
                        "            wandb.init(project='p')\n        if is_global_main():\n"
                        "            wandb.init(project='q')\n",
        "train.py": "import torch_xla\nfrom callbacks import Wandb\n\n\ndef _mp(i):\n    Wandb().begin()\n\n\n"
                    "torch_xla.launch(_mp)\n",
    })
    assert lint_all(tmp_path) == {("callbacks.py", 8, "XLA604")}
    assert lint_all(tmp_path, Settings(project="off")) == set()


def test_a_module_the_model_cannot_read_is_unknown_and_the_rest_still_works(tmp_path, monkeypatch):
    flat_project(tmp_path)
    # other.py names torch_xla and a launch: a launch candidate whose summary fails
    write(tmp_path, {"other.py": "import torch_xla\nimport utils\n\nutils.spawn(utils)\n"})
    real = psummary.summarise
    calls = []

    def picky(path, *a):
        if path.name == "other.py":
            calls.append(path.name)
            raise RecursionError
        return real(path, *a)

    monkeypatch.setattr(project, "summarise", picky)
    assert lint_all(tmp_path) == WANT
    assert calls == ["other.py"]  # asked once, unknown afterwards


# --- values across calls: what callers in other modules pass to a parameter ----------------

HELPERS = """\
import torch


def train_fn(loader, model, opt, xm):
    xm.master_print(xm.xrt_world_size())
    for batch in loader:
        model(batch).sum().backward()
        xm.optimizer_step(opt, barrier=True)


def shared_fn(loader, model, opt, xm):
    for batch in loader:
        model(batch).sum().backward()
        xm.optimizer_step(opt, barrier=True)


def splat_fn(loader, model, opt, xm):
    for batch in loader:
        model(batch).sum().backward()
        xm.optimizer_step(opt, barrier=True)


def default_fn(loader=None, xm=None):
    return xm.xrt_world_size()


def handed_fn(xm):
    return xm.xrt_world_size()
"""

LAUNCH = """\
import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.distributed.xla_multiprocessing as xmp
from torch.utils.data import DataLoader

import helpers
from helpers import default_fn, handed_fn, shared_fn, splat_fn, train_fn


def _run(index, model, opt, data):
    device = torch_xla.device()
    loader = pl.MpDeviceLoader(DataLoader(data, batch_size=8, drop_last=True), device)
    train_fn(loader, model, opt, xm)
    helpers.train_fn(loader, model, opt, xm=xm)
    shared_fn(loader, model, opt, xm)
    args = (loader, model, opt)
    splat_fn(*args, xm)
    default_fn()
    xmp_later = handed_fn
    return xmp_later


if __name__ == "__main__":
    xmp.spawn(_run)
"""

CPU_CALLER = """\
import torch
from torch.utils.data import DataLoader

from helpers import shared_fn


def main(model, opt, data, fake_xm):
    shared_fn(DataLoader(data), model, opt, fake_xm)
"""


def test_values_passed_from_other_modules(tmp_path):
    """``train_fn(loader, model, opt, xm)`` in the launching module passes the ``xm`` module and
    a device loader: XLA801 and XLA204 inside ``helpers.train_fn``. Traps: a function a CPU
    script also calls (its text names no torch_xla: what it passes is unknown), a caller's
    splat, a default with no caller that passes it, a function handed on as a value."""
    write(tmp_path, {"pyproject.toml": "", "helpers.py": HELPERS, "train.py": LAUNCH, "cpu_eval.py": CPU_CALLER})
    want = {("helpers.py", 5, "XLA801"), ("helpers.py", 8, "XLA204")}
    assert lint(tmp_path, "helpers.py") == want
    project.clear_cache()
    assert lint_all(tmp_path) - {f for f in lint_all(tmp_path) if f[0] == "train.py"} == want


def test_values_passed_from_other_modules_need_every_caller(tmp_path):
    """A second XLA caller of ``train_fn`` that passes a plain DataLoader and another module: no
    XLA204, no XLA801 there; ``shared_fn``, whose only caller passes a device loader and ``xm``
    (no CPU script here), keeps its XLA204."""
    other = LAUNCH.replace("import helpers\n", "import helpers\nimport fake_xm\n") + (
        "\n\ndef _cpu_check(model, opt, data):\n    train_fn(DataLoader(data), model, opt, fake_xm)\n")
    write(tmp_path, {"pyproject.toml": "", "helpers.py": HELPERS, "train.py": other, "fake_xm.py": "x = 1\n"})
    assert lint(tmp_path, "helpers.py") == {("helpers.py", 14, "XLA204")}


def test_callers_lookup_describes_each_argument(tmp_path):
    write(tmp_path, {"pyproject.toml": "", "helpers.py": HELPERS, "train.py": LAUNCH, "cpu_eval.py": CPU_CALLER})
    lookup = project.callers_lookup(str(tmp_path / "helpers.py"), Settings())
    calls = lookup("train_fn")
    assert [(c.line, [a.kind for a in c.args], [(k, a.kind, a.name) for k, a in c.kwargs], c.splat) for c in calls] == [
        (15, ["device_loader", "unknown", "unknown", "name"], [], False),
        (16, ["device_loader", "unknown", "unknown"], [("xm", "name", "torch_xla.core.xla_model")], False),
    ]
    assert calls[0].args[3].name == "torch_xla.core.xla_model"
    assert lookup("shared_fn") is None  # cpu_eval.py names it and is not summarised: unknown
    assert [c.splat for c in lookup("splat_fn")] == [True]
    assert [(c.line, c.escape) for c in lookup("handed_fn")] == [(21, True)]  # read as a value, not called
    assert lookup("default_fn")[0].args == ()
    assert lookup("nobody") == ()


SAVE_HELPER = 'import torch\n\n\ndef save_state(model, path):\n    torch.save(model.state_dict(), path)\n'


def _saving_launcher(arguments: str) -> str:
    return ("import torch\nimport torch_xla\n\nfrom helpers import save_state\n\n\ndef _mp_fn(index):\n"
            "    model = torch.nn.Linear(4, 2).to(torch_xla.device())\n"
            f"{arguments}\n\n\nif __name__ == '__main__':\n    torch_xla.launch(_mp_fn)\n")


@pytest.mark.parametrize("arguments, want", [
    ('    save_state(model, "m.pt")', {("helpers.py", 5, "XLA601")}),  # the XLA model itself
    ('    save_state(model.cpu(), "m.pt")', set()),  # a host copy: silent (it fired before)
    ('    host = model.to("cpu")\n    save_state(host, "m.pt")', set()),
    ('    save_state(model.cpu(), "a.pt")\n    save_state(model, "b.pt")', {("helpers.py", 5, "XLA601")}),
])
def test_a_host_copy_from_every_caller_is_not_xla_state(tmp_path, arguments, want):
    """XLA601 in a helper that another module's launched code runs follows what its callers
    pass: every caller handing it a host copy (``model.cpu()``, or a name bound to one) makes
    the saved state CPU tensors, as the same code in one file already was."""
    write(tmp_path, {"pyproject.toml": "", "helpers.py": SAVE_HELPER, "train.py": _saving_launcher(arguments)})
    assert lint(tmp_path, "helpers.py") == want
    project.clear_cache()
    assert {f for f in lint_all(tmp_path) if f[0] == "helpers.py"} == want


# --- what the launching module sets up holds for the code it reaches -----------------------

ENGINE = """\
def train_epoch(model, optimizer, loader):
    for x in loader:
        optimizer.zero_grad()
        model(x).sum().backward()
        optimizer.step()
"""

DDP_TRAIN = """\
import torch
import torch.distributed as dist
import torch_xla
from torch.nn.parallel import DistributedDataParallel as DDP

from engine import train_epoch


def _mp_fn(index, loader):
    dist.init_process_group("xla", init_method="xla://")
    model = DDP(torch.nn.Linear(4, 1).to(torch_xla.device()), gradient_as_bucket_view=True)
    train_epoch(model, torch.optim.SGD(model.parameters(), lr=0.1), loader)


if __name__ == "__main__":
    torch_xla.launch(_mp_fn, args=([],))
"""

FSDP_TRAIN = """\
import torch
import torch_xla
from torch_xla.distributed.fsdp import XlaFullyShardedDataParallel as FSDP

from engine import train_epoch


def _mp_fn(index, loader):
    model = FSDP(torch.nn.Linear(4, 1))
    train_epoch(model, torch.optim.SGD(model.parameters(), lr=0.1), loader)


if __name__ == "__main__":
    torch_xla.launch(_mp_fn, args=([],))
"""

UNWRAPPED_TRAIN = """\
import torch
import torch_xla

from engine import train_epoch


def _mp_fn(index, loader):
    model = torch.nn.Linear(4, 1).to(torch_xla.device())
    train_epoch(model, torch.optim.SGD(model.parameters(), lr=0.1), loader)


if __name__ == "__main__":
    torch_xla.launch(_mp_fn, args=([],))
"""


@pytest.mark.parametrize("train, want", [
    (DDP_TRAIN, set()),  # DDP reduces the gradients: xm.optimizer_step would reduce them twice
    (FSDP_TRAIN, set()),  # XLA FSDP reduces (and shards) them
    (UNWRAPPED_TRAIN, {("engine.py", 5, "XLA201")}),  # nothing reduces them: the step diverges
    (DDP_TRAIN.replace("DDP(", "(").replace(", gradient_as_bucket_view=True", ""), {("engine.py", 5, "XLA201")}),
], ids=["ddp", "fsdp", "unwrapped", "ddp-removed"])
def test_gradient_reduction_of_the_launching_module(tmp_path, train, want):
    """XLA201 in ``engine.train_epoch``, reached from ``train.py``'s launched ``_mp_fn``, asks
    whether the launching module reduces the gradients (DDP, XLA FSDP), not only engine.py."""
    write(tmp_path, {"pyproject.toml": "", "engine.py": ENGINE, "train.py": train})
    assert lint_all(tmp_path) == want


CALLBACK_ENGINE = """\
def train_epoch(model, optimizer, loader, after_backward):
    for x in loader:
        optimizer.zero_grad()
        model(x).sum().backward()
        after_backward(optimizer)
        optimizer.step()
"""

REDUCING_TRAIN = """\
import torch
import torch_xla
import torch_xla.core.xla_model as xm

from engine import train_epoch


def sync_grads(opt):
    xm.reduce_gradients(opt)


def _mp_fn(index, loader):
    model = torch.nn.Linear(4, 1).to(torch_xla.device())
    train_epoch(model, torch.optim.SGD(model.parameters(), lr=0.1), loader, sync_grads)


if __name__ == "__main__":
    torch_xla.launch(_mp_fn, args=([],))
"""


@pytest.mark.parametrize("reduce, want", [
    (True, set()),
    (False, {("engine.py", 6, "XLA201")}),
], ids=["reduce_gradients", "no-reduction"])
def test_explicit_reduction_of_the_launching_module(tmp_path, reduce, want):
    """The launching module's launched code reduces the gradients itself
    (``xm.reduce_gradients(opt)`` in the callback it hands to ``train_epoch``)."""
    train = REDUCING_TRAIN if reduce else REDUCING_TRAIN.replace("    xm.reduce_gradients(opt)\n", "    print(opt)\n")
    write(tmp_path, {"pyproject.toml": "", "engine.py": CALLBACK_ENGINE, "train.py": train})
    assert lint_all(tmp_path) == want


def test_any_launching_module_that_reduces_keeps_it_silent(tmp_path):
    """Two launching modules reach ``train_epoch``, one wraps in DDP: precision first, silent
    (like one module with DDP on one of its paths); each alone keeps its own answer."""
    write(tmp_path, {"pyproject.toml": "", "engine.py": ENGINE, "train.py": DDP_TRAIN,
                     "plain.py": UNWRAPPED_TRAIN})
    assert lint(tmp_path, "engine.py") == set()
    (tmp_path / "train.py").unlink()
    project.clear_cache()
    assert lint(tmp_path, "engine.py") == {("engine.py", 5, "XLA201")}


DATA = """\
import torch
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def make_loader():
    ds = TensorDataset(torch.randn(64, 4))
    return DataLoader(ds, batch_size=8, sampler=DistributedSampler(ds), drop_last=True)
"""

PG_TRAIN = """\
import torch
import torch.distributed as dist
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl

from data import make_loader


def _mp_fn(index):
    dist.init_process_group("xla", init_method="xla://")
    device = torch_xla.device()
    model = torch.nn.Linear(4, 1).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for (x,) in pl.MpDeviceLoader(make_loader(), device):
        opt.zero_grad()
        model(x).sum().backward()
        xm.optimizer_step(opt)


if __name__ == "__main__":
    torch_xla.launch(_mp_fn)
"""


@pytest.mark.parametrize("init, want", [
    (True, set()),  # the sampler takes rank and world size from the process group
    (False, {("data.py", 8, "XLA303")}),  # no process group: DistributedSampler raises ValueError
], ids=["process-group", "no-process-group"])
def test_process_group_of_the_launching_module(tmp_path, init, want):
    train = PG_TRAIN if init else PG_TRAIN.replace('    dist.init_process_group("xla", init_method="xla://")\n', "")
    write(tmp_path, {"pyproject.toml": "", "data.py": DATA, "train.py": train})
    assert lint_all(tmp_path) == want


def test_launch_setup_in_the_facts(tmp_path):
    """``facts_for`` carries the combined :class:`~flake8_xla.project.LaunchSetup` of the
    launching modules; a module nothing reaches has none."""
    write(tmp_path, {"pyproject.toml": "", "engine.py": ENGINE, "train.py": DDP_TRAIN, "data.py": DATA})
    facts = project.facts_for(str(tmp_path / "engine.py"), Settings())
    assert facts.setup == project.LaunchSetup(reduces=True, process_group=True, spmd=False, framework=False)
    assert project.facts_for(str(tmp_path / "data.py"), Settings()).setup is None


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
@pytest.mark.parametrize("torch_text", [True, False])
def test_a_named_pipe_in_the_project_is_not_read(tmp_path, torch_text):
    """A named pipe called ``*.py`` in the project (a test left it, a tool's socket) is no
    module: reading it blocked the run until a writer came (the torch_xla search for a file
    without torch, and the reverse-import index for a file with it)."""
    body = "import torch\nimport torch_xla\n\n\ndef f(x):\n    return x.cuda()\n" if torch_text else "x = 1\n"
    write(tmp_path, {"pyproject.toml": "", "a.py": body, "b.py": "import torch_xla\nfrom a import f\n"})
    os.mkfifo(tmp_path / "pipe.py")
    proc = subprocess.run([sys.executable, "-m", "flake8", "--select=XLA", "a.py"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert proc.stderr == ""
    assert proc.stdout == ("a.py:6:12: XLA401 .cuda() in XLA code; use .to(torch_xla.device())\n" if torch_text else "")
