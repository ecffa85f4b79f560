"""Device tensors held in dicts and returned by gradient clips (issue 18's fresh-scripts
misses): ``outputs = {"loss": loss.detach(), "grad_norm": norm}`` read as ``outputs["loss"].item()``
in the step, in a helper the step calls with it, or in a callback of another module the step
dispatches it to; ``clip_grad_norm_``'s total norm after a backward of the same function.
Each with the traps beside it: a host value under another key, a dict an item is stored
into, a ``**`` entry, a clip in a function without a backward."""

from __future__ import annotations

import pytest

from test_project_mode import lint, lint_all, write
from test_rules import lint as lint_source


#: each test starts and ends with an empty project cache (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("fresh_project_cache")


LOOP = '''\
import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
{helpers}

def _mp_fn(index, model, loader, opt):
    device = torch_xla.device()
    model = model.to(device)
    for step, (x, y) in enumerate(pl.MpDeviceLoader(loader, device)):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        xm.optimizer_step(opt)
        {body}


if __name__ == "__main__":
    torch_xla.launch(_mp_fn, args=())
'''


def loop(body: str, helpers: str = "") -> str:
    return LOOP.format(body=body, helpers=helpers)


def reads(source: str) -> set:
    return {(f.line, f.col) for f in lint_source(source) if f.code == "XLA501"}


def test_an_item_of_a_dict_display_is_what_its_key_holds():
    src = loop('out = {"loss": loss.detach(), "lr": opt.param_groups[0]["lr"], "n": 3}\n'
               '        print(out["loss"].item())\n'
               '        print(float(out["lr"]), out["n"])\n'
               '        v = out["loss"]\n'
               '        print(v.item())')
    assert reads(src) == {(17, 14), (20, 14)}


def test_a_dict_an_item_is_stored_into_or_with_a_splat_is_unknown():
    src = loop('out = {"loss": loss.detach()}\n'
               '        out["loss"] = out["loss"].mean().item()\n'
               '        print(out["loss"])\n'
               '        more = {"loss": loss.detach(), **extra}\n'
               '        print(more["loss"])\n'
               '        up = {"loss": loss.detach()}\n'
               '        up.update(loss=1.0)\n'
               '        print(up["loss"])', helpers="extra = {}\n")
    # a dict some code stores into is unknown throughout (its items may be host values)
    assert reads(src) == set()


def test_a_clip_norm_after_a_backward_is_a_device_tensor():
    src = loop('print(norm.item())\n'
               '        xm.master_print(f"norm {norm}")')
    assert reads(src) == {(16, 14), (17, 8)}


def test_a_clip_norm_in_a_function_without_a_backward_is_unknown():
    src = ('import torch\nimport torch_xla\n\n\n'
           'def clip(model):\n'
           '    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n'
           '    print(norm.item())\n'
           '    return norm\n')
    assert reads(src) == set()


def test_a_helper_the_step_hands_a_dict_reads_the_device_keys_only():
    helpers = ('\n\ndef log_step(step, outputs):\n'
               '    print(outputs["loss"].item())\n'
               '    lr = outputs["lr"]\n'
               '    print(float(lr))\n'
               '    n = outputs["norm"]\n'
               '    print(n.item())\n')
    src = loop('log_step(step, {"loss": loss.detach(), "lr": opt.param_groups[0]["lr"], "norm": norm})', helpers)
    assert reads(src) == {(8, 10), (12, 10)}


CALLBACKS = '''\
import torch_xla.core.xla_model as xm


class Callback:
    def on_step_end(self, trainer, step, outputs):
        pass


class SpikeDetector(Callback):
    def on_step_end(self, trainer, step, outputs):
        value = outputs["loss"].item()
        if value > 10.0:
            print("spike")


class GradNorm(Callback):
    def on_step_end(self, trainer, step, outputs):
        norm = outputs["grad_norm"]
        trainer.norms.append(norm.item())


class LearningRate(Callback):
    def on_step_end(self, trainer, step, outputs):
        print(float(outputs["lr"]))


class History(Callback):
    def __init__(self):
        self.losses = []

    def on_step_end(self, trainer, step, outputs):
        self.losses.append(outputs["loss"].detach())

    def on_train_end(self, trainer):
        print([v.item() for v in self.losses])
'''

TRAINER = '''\
import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl


class Trainer:
    def __init__(self, model, opt, loader, callbacks=None):
        self.device = torch_xla.device()
        self.model = model.to(self.device)
        self.opt = opt
        self.loader = loader
        self.callbacks = list(callbacks or [])
        self.norms = []

    def train_epoch(self):
        for step, (x, y) in enumerate(pl.MpDeviceLoader(self.loader, self.device)):
            self.opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(self.model(x), y)
            loss.backward()
            xm.reduce_gradients(self.opt)
            grad_norm = torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
            self.opt.step()
            outputs = {"loss": loss.detach(), "grad_norm": grad_norm, "lr": self.opt.param_groups[0]["lr"]}
            for cb in self.callbacks:
                cb.on_step_end(self, step, outputs)
        for cb in self.callbacks:
            cb.on_train_end(self)
'''

RUN = '''\
import torch
import torch_xla
from callbacks import GradNorm, History, LearningRate, SpikeDetector
from trainer import Trainer


def _mp_fn(index):
    model = torch.nn.Linear(4, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    trainer = Trainer(model, opt, [], [SpikeDetector(), GradNorm(), LearningRate(), History()])
    trainer.train_epoch()


if __name__ == "__main__":
    torch_xla.launch(_mp_fn, args=())
'''


def test_callbacks_of_another_module_read_the_device_items_they_are_dispatched(tmp_path):
    write(tmp_path, {"pyproject.toml": "", "callbacks.py": CALLBACKS, "trainer.py": TRAINER, "run.py": RUN})
    expected = {("callbacks.py", 11, "XLA501"), ("callbacks.py", 19, "XLA501")}
    assert {f for f in lint_all(tmp_path) if f[2] == "XLA501"} == expected
    assert {f for f in lint(tmp_path, "callbacks.py") if f[2] == "XLA501"} == expected


CBS = '''\
class BadSync:
    def on_step_end(self, trainer, logs):
        trainer.raw.append(trainer.last_loss.item())


class Quiet:
    def on_step_end(self, trainer, logs):
        print(f"step {trainer.global_step} lr {logs['lr']}")
        last = trainer.last_loss
        if trainer.global_step % 100 == 0:
            print(float(last))
'''

LOOP_CLASS = '''\
import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
{imports}


class Loop:
    def __init__(self, callbacks):
        self.device = torch_xla.device()
        self.model = torch.nn.Linear(8, 2).to(self.device)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.callbacks = callbacks
        self.global_step = 0
        self.raw = []
        self.last_loss = None

    def run(self, loader):
        for x, y in pl.MpDeviceLoader(loader, self.device):
            self.opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(self.model(x), y)
            loss.backward()
            xm.optimizer_step(self.opt)
            self.global_step += 1
            self.last_loss = loss.detach()
            logs = {{"lr": self.opt.param_groups[0]["lr"]}}
            for cb in self.callbacks:
                cb.on_step_end(self, logs)
{classes}

def _mp_fn(index):
    Loop([BadSync(), Quiet()]).run([])


if __name__ == "__main__":
    torch_xla.launch(_mp_fn, args=())
'''


def test_a_callback_reads_a_device_attribute_of_the_trainer_another_module_hands_it(tmp_path):
    # the trainer class and the list of callbacks share the entry module; the callbacks' module
    # is imported only there: Loop([...]) of the module's own class is recorded for the dispatch
    write(tmp_path, {"pyproject.toml": "", "cbs.py": CBS,
                     "loop.py": LOOP_CLASS.format(imports="from cbs import BadSync, Quiet", classes="")})
    expected = {("cbs.py", 3, "XLA501"), ("cbs.py", 11, "XLA507")}
    assert {f for f in lint_all(tmp_path) if f[2] in ("XLA501", "XLA507")} == expected
    assert {f for f in lint(tmp_path, "cbs.py") if f[2] in ("XLA501", "XLA507")} == expected


def test_a_callback_reads_a_device_attribute_of_the_trainer_in_one_module():
    src = LOOP_CLASS.format(imports="", classes="\n\n" + CBS)
    found = {(f.line, f.code) for f in lint_source(src) if f.code in ("XLA501", "XLA507")}
    assert found == {(33, "XLA501"), (41, "XLA507")}


@pytest.mark.parametrize("body", [
    'view = out\n        view["loss"] = 0.0\n        print(out["loss"])',  # an alias stores into it
    'reduce_metrics(out)\n        print(out["loss"])',  # a helper may change it in place
    'out["loss"], out["n"] = host_pair(1, 2)\n        print(out["loss"])',  # a store whose value is unknown
    'for out["loss"] in [0.0]:\n            pass\n        print(out["loss"])',  # a for target
    'dict.update(out, loss=0.0)\n        print(out["loss"])',  # handed to a call
], ids=["alias", "helper", "unpacking", "for-target", "unbound-update"])
def test_a_dict_that_may_have_changed_is_unknown(body):
    helpers = ("\n\ndef reduce_metrics(m):\n    for k in list(m):\n        m[k] = float(k)\n\n\n"
               "def host_pair(a, b):\n    return float(a), float(b)\n")
    src = loop('out = {"loss": loss.detach(), "n": norm}\n        ' + body, helpers)
    assert reads(src) == set()


def test_a_helper_that_stores_into_its_dict_parameter_reads_what_it_stored():
    helpers = ('\n\ndef log_step(step, out):\n    out["loss"] = 0.0\n    print(out["loss"])\n\n\n'
               'def log_update(step, out):\n    out.update(loss=0.0)\n    print(out["loss"])\n')
    src = loop('log_step(step, {"loss": loss.detach()})\n        log_update(step, {"loss": loss.detach()})', helpers)
    assert reads(src) == set()


def test_a_checkpoint_that_also_holds_the_loss_is_still_a_checkpoint(tmp_path):
    # a dict with a state_dict() and a device loss is described as a checkpoint state: XLA601
    # in the helper that torch.saves it (the device-dict description must not hide it)
    ckpt = "import torch\n\n\ndef save_b(state, path):\n    torch.save(state, path)\n"
    train = loop('state = {"model": model.state_dict(), "epoch": 1, "loss": loss.detach()}\n'
                 '        save_b(state, "b.pt")', helpers="from ckpt import save_b\n")
    write(tmp_path, {"pyproject.toml": "", "ckpt.py": ckpt, "train.py": train})
    assert {f for f in lint_all(tmp_path) if f[2] == "XLA601"} == {("ckpt.py", 5, "XLA601")}
