"""XLA201 and an optimizer a call gave back (a blind project's wrong finding, session 12).

``model, optimizer, dl = accelerator.prepare(model, optimizer, dl)`` with a project or
third-party ``Accelerator``: the optimizer is now the wrapper ``prepare`` built (an
``AcceleratedOptimizer`` whose ``step()`` runs ``xm.optimizer_step``), so ``optimizer.step()``
is still the update of the step but whether it reduces is unknown: no XLA201.
"""

from __future__ import annotations

import ast

from flake8_xla import engine
from flake8_xla.settings import Settings

SRC = '''\
import torch
import torch_xla
from mini_accel import Accelerator


def _mp_fn(index, ds):
    acc = Accelerator()
    model = torch.nn.Linear(4, 4)
    optimizer = torch.optim.AdamW(model.parameters())
    model, optimizer = acc.prepare(model, optimizer)
    for x in ds:
        loss = model(x).sum()
        acc.backward(loss)
        optimizer.step()
        print(loss.item())


if __name__ == "__main__":
    torch_xla.launch(_mp_fn, args=([],))
'''


def _codes(src: str) -> set:
    return {(f.line, f.code) for f in engine.run(ast.parse(src), Settings(), src)}


def test_an_optimizer_the_wrapper_gave_back_is_no_xla201():
    # the loop is still the training step (the host read is XLA501)
    assert _codes(SRC) == {(15, "XLA501")}


def test_the_optimizer_itself_is_xla201():
    src = SRC.replace("    model, optimizer = acc.prepare(model, optimizer)\n", "")
    assert _codes(src) == {(8, "XLA404"), (13, "XLA201"), (14, "XLA501")}  # (and the model never moved)
