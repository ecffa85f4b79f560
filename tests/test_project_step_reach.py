"""Where the step runs, and what it computes, across module edges (issue 28, session 14).

- A helper module without torch_xla computes the loss from the step's device tensors: its
  boolean-mask subscript is XLA503 (the gate that asks the callers now counts a mask subscript
  of a parameter), and what it returns is a device tensor where the step calls it (the light
  index's ``tensor_of``: a torch computation on its parameters).
- The step loop iterates a loader parameter the launching module fills with a device loader:
  its batches are device tensors, and ``model(images)`` of a parameter the loop trains
  (``model.train()``) is one too.
- ``xm.optimizer_step(opt, barrier=True)`` in a device-loader loop is XLA204's redundant
  barrier: what follows it in the pass is still the step (the gated f-string of the loss).
- A ``training_step`` the base trainer's loop calls on ``self`` runs once per step, so the
  gradient-accumulation helper it calls (another module) is step code: its ``loss.item()``.
"""

from __future__ import annotations

import pytest

from flake8_xla import project
from test_project_mode import lint, lint_all, write

pytestmark = pytest.mark.usefixtures("fresh_project_cache")

METRICS = '''\
from collections import defaultdict

import torch
import torch.nn.functional as F


def masked_ce_loss(logits, labels, ignore=-1):
    keep = labels != ignore
    return F.cross_entropy(logits[keep], labels[keep])


def plain_total(values):
    return sum(values)


class Logger:
    def __init__(self):
        self.sums = defaultdict(float)

    def update(self, name, value):
        if isinstance(value, torch.Tensor):
            value = value.item()
        self.sums[name] += value
'''

HELPERS = '''\
import torch_xla.core.xla_model as xm

from metrics import masked_ce_loss


def train_loop(loader, model, optimizer, logger, every):
    model.train()
    for step, (images, labels) in enumerate(loader):
        optimizer.zero_grad()
        outputs = model(images)
        loss = masked_ce_loss(outputs, labels)
        loss.backward()
        logger.update("loss", loss.detach())
        xm.optimizer_step(optimizer, barrier=True)
        if step % every == 0:
            xm.master_print(f"step {step} loss {loss}")
'''

RUN = '''\
import torch
import torch_xla
import torch_xla.distributed.parallel_loader as pl
import torch_xla.distributed.xla_multiprocessing as xmp

import helpers
from metrics import Logger


def _mp_fn(index, loader):
    device = torch_xla.device()
    model = torch.nn.Linear(4, 2).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    logger = Logger()
    helpers.train_loop(pl.MpDeviceLoader(loader, device), model, optimizer, logger, 10)


if __name__ == "__main__":
    xmp.spawn(_mp_fn, args=(None,))
'''

EXPECTED = {
    ("helpers.py", 14, "XLA204"),  # barrier=True in a device-loader loop
    ("helpers.py", 16, "XLA507"),  # the f-string of the device loss under the step gate
    ("metrics.py", 9, "XLA503"),  # the boolean mask of the step's labels, in the helper module
    ("metrics.py", 22, "XLA501"),  # the logger's .item() of the step's loss, every step
}


def test_step_values_reach_a_helper_module_without_torch_xla(tmp_path):
    write(tmp_path, {"pyproject.toml": "", "metrics.py": METRICS, "helpers.py": HELPERS, "run.py": RUN})
    assert lint_all(tmp_path) == EXPECTED
    for rel in ("metrics.py", "helpers.py"):  # each file alone gives the same
        project.clear_cache()
        assert lint(tmp_path, rel) == {f for f in EXPECTED if f[0] == rel}


def test_a_plain_loader_leaves_the_batches_unknown(tmp_path):
    # the same step over a DataLoader the caller does not move: nothing is a device tensor
    # there (the barrier is the fix of XLA301 there, so no XLA204 either)
    write(tmp_path, {"pyproject.toml": "", "metrics.py": METRICS, "helpers.py": HELPERS,
                     "run.py": RUN.replace("pl.MpDeviceLoader(loader, device)", "loader")})
    assert lint_all(tmp_path) == set()


def test_a_helper_that_returns_a_python_value_is_no_device_tensor(tmp_path):
    helpers = HELPERS.replace("loss = masked_ce_loss(outputs, labels)\n        loss.backward()",
                              "loss = outputs.sum()\n        loss.backward()\n        n = plain_total([1, 2])") \
        .replace('xm.master_print(f"step {step} loss {loss}")', 'xm.master_print(f"step {step} n {n}")') \
        .replace("from metrics import masked_ce_loss", "from metrics import plain_total")
    write(tmp_path, {"pyproject.toml": "", "metrics.py": METRICS, "helpers.py": helpers, "run.py": RUN})
    assert lint_all(tmp_path) == {("helpers.py", 15, "XLA204"), ("metrics.py", 22, "XLA501")}


TRAINER = '''\
import torch

from .accum import Accumulator


class Trainer:
    def __init__(self, model, loader):
        self.model = model
        self.loader = loader
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        self.accumulator = Accumulator(4)

    def training_step(self, batch):
        loss = self.model(batch).sum()
        self.accumulator.backward(loss)

    def optimizer_step(self):
        self.optimizer.step()

    def train(self):
        for batch in self.get_loader():
            self.training_step(batch)
            if self.accumulator.ready():
                self.optimizer_step()
                self.optimizer.zero_grad()

    def get_loader(self):
        return self.loader
'''

ACCUM = '''\
class Accumulator:
    def __init__(self, steps):
        self.steps = steps
        self.count = 0
        self.total = 0.0

    def backward(self, loss):
        (loss / self.steps).backward()
        self.count += 1
        self.total += loss.item()

    def ready(self):
        return self.count % self.steps == 0
'''

TPU = '''\
import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl

from kit.trainer import Trainer


class TpuTrainer(Trainer):
    def get_loader(self):
        return pl.MpDeviceLoader(self.loader, torch_xla.device())

    def optimizer_step(self):
        xm.optimizer_step(self.optimizer)


def _mp_fn(index):
    model = torch.nn.Linear(4, 2).to(torch_xla.device())
    TpuTrainer(model, [torch.zeros(2, 4)]).train()


if __name__ == "__main__":
    torch_xla.launch(_mp_fn)
'''


def test_a_method_the_step_loop_calls_on_self_runs_its_calls_per_step(tmp_path):
    write(tmp_path, {"pyproject.toml": "", "kit/__init__.py": "", "kit/trainer.py": TRAINER,
                     "kit/accum.py": ACCUM, "train_tpu.py": TPU})
    assert lint_all(tmp_path) == {("kit/accum.py", 10, "XLA501")}
    project.clear_cache()
    assert lint(tmp_path, "kit/accum.py") == {("kit/accum.py", 10, "XLA501")}


def test_the_accumulator_outside_the_step_stays_silent(tmp_path):
    # the same helper called once after training (no step loop calls training_step's caller)
    trainer = TRAINER.replace("            self.training_step(batch)\n", "            pass\n") \
        .replace("    def get_loader(self):", "    def finish(self, batch):\n        self.training_step(batch)\n\n"
                                                "    def get_loader(self):")
    write(tmp_path, {"pyproject.toml": "", "kit/__init__.py": "", "kit/trainer.py": trainer,
                     "kit/accum.py": ACCUM, "train_tpu.py": TPU})
    assert lint_all(tmp_path) == set()


DIST_UTILS = '''\
import torch
import torch.distributed as dist


def distributed_main(i, main, cfg):
    dist.init_process_group("xla", init_method="xla://")
    main(cfg)


def call_main(cfg, main):
    if cfg.tpu:
        import torch_xla.distributed.xla_multiprocessing as xmp

        xmp.spawn(distributed_main, args=(main, cfg))
    else:
        main(cfg)
'''

FAIR_TRAINER = '''\
import torch


class Trainer:
    def __init__(self, model, task):
        self.model = model
        self.task = task
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    def train_step(self, sample):
        self.optimizer.zero_grad()
        self.task.backward(self.model, sample)
        grad_norm = torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        if not torch.isfinite(grad_norm).all():
            raise FloatingPointError("gradients are Nan/Inf")
        self.optimizer.step()
'''

FAIR_TRAIN = '''\
import argparse

import torch

from fair import distributed_utils
from fair.trainer import Trainer


class Task:
    def backward(self, model, sample):
        model(sample).sum().backward()


def main(cfg):
    if cfg.tpu:
        import torch_xla

        device = torch_xla.device()
    else:
        device = torch.device("cpu")
    trainer = Trainer(torch.nn.Linear(4, 2).to(device), Task())
    for sample in [torch.zeros(2, 4)]:
        trainer.train_step(sample)


def cli_main():
    p = argparse.ArgumentParser()
    p.add_argument("--tpu", action="store_true")
    distributed_utils.call_main(p.parse_args(), main)


if __name__ == "__main__":
    cli_main()
'''


def test_a_function_handed_through_the_launch_args_is_launched_xla_code(tmp_path):
    # fairseq's call_main: xmp.spawn(distributed_main, args=(main, cfg)), distributed_main
    # calls main(cfg); main's loop calls a train_step that updates once per call (its
    # backward in another object): its check of the clipped norm is XLA502, and the spawned
    # processes are XLA code (the dist.init_process_group("xla") without init_method has it)
    write(tmp_path, {"pyproject.toml": "", "fair/__init__.py": "", "fair/distributed_utils.py": DIST_UTILS,
                     "fair/trainer.py": FAIR_TRAINER, "train.py": FAIR_TRAIN})
    # (and the loop over a plain list in the launched main has no per-step sync: XLA302)
    assert lint_all(tmp_path) == {("fair/trainer.py", 14, "XLA502"), ("train.py", 22, "XLA302")}
    project.clear_cache()
    assert lint(tmp_path, "fair/trainer.py") == {("fair/trainer.py", 14, "XLA502")}


def test_only_the_function_handed_in_is_launched(tmp_path):
    # the script hands call_main another function: main (and the trainer) never runs
    train = FAIR_TRAIN.replace("distributed_utils.call_main(p.parse_args(), main)",
                               "distributed_utils.call_main(p.parse_args(), evaluate)") \
        .replace("def cli_main():", "def evaluate(cfg):\n    print(cfg)\n\n\ndef cli_main():")
    write(tmp_path, {"pyproject.toml": "", "fair/__init__.py": "", "fair/distributed_utils.py": DIST_UTILS,
                     "fair/trainer.py": FAIR_TRAINER, "train.py": train})
    assert lint_all(tmp_path) == {("train.py", 22, "XLA302")}  # (main uses torch_xla itself: its own loop)


def test_the_script_level_hands_its_own_function_to_the_launcher(tmp_path):
    # `distributed_utils.call_main(args, main)` in the __main__ block itself (b3 of blind set b):
    # the launched main is the script's own function, reached only through the other module,
    # and its per-epoch helper `train(trainer)` calls the step on the trainer it is handed
    train = FAIR_TRAIN.replace('''    trainer = Trainer(torch.nn.Linear(4, 2).to(device), Task())
    for sample in [torch.zeros(2, 4)]:
        trainer.train_step(sample)


def cli_main():
    p = argparse.ArgumentParser()
    p.add_argument("--tpu", action="store_true")
    distributed_utils.call_main(p.parse_args(), main)


if __name__ == "__main__":
    cli_main()
''', '''    trainer = Trainer(torch.nn.Linear(4, 2).to(device), Task())
    train(trainer)


def train(trainer):
    for sample in [torch.zeros(2, 4)]:
        trainer.train_step(sample)


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--tpu", action="store_true")
    distributed_utils.call_main(p.parse_args(), main)
''')
    assert train != FAIR_TRAIN
    write(tmp_path, {"pyproject.toml": "", "fair/__init__.py": "", "fair/distributed_utils.py": DIST_UTILS,
                     "fair/trainer.py": FAIR_TRAINER, "train.py": train})
    assert {f for f in lint_all(tmp_path) if f[0] == "fair/trainer.py"} == {("fair/trainer.py", 14, "XLA502")}
