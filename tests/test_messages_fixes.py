"""Message wording where the right fix depends on the module: XLA813 when the variable it
resembles is itself deprecated, XLA702 when DDP/FSDP already reduce the gradients."""

from __future__ import annotations

import ast

import pytest

from flake8_xla import engine, settings as settings_mod


def messages(source: str, code: str, version: str | None = None) -> list[str]:
    found = engine.run(ast.parse(source), settings_mod.build(None, version), source)
    return [f.message for f in found if f.code == code]


@pytest.mark.parametrize("version,text", [
    ("2.3", "XLA_USE_F16 is not read by torch_xla (a no-op); did you mean XLA_USE_FP16?"),
    ("2.4", 'XLA_USE_F16 is not read by torch_xla, and XLA_USE_FP16 is deprecated; '
            'use torch.autocast("xla", dtype=torch.bfloat16)'),
    ("2.9", 'XLA_USE_F16 is not read by torch_xla, nor is XLA_USE_FP16 any more; '
            'use torch.autocast("xla", dtype=torch.bfloat16)'),
])
def test_xla813_does_not_suggest_another_no_op(version, text):
    assert messages('import os\nos.environ["XLA_USE_F16"] = "1"\n', "XLA813", version) == [text]


def test_xla813_plain_typo_suggests_the_real_name():
    assert messages('import os\nos.environ["PJRT_DEVCE"] = "TPU"\n', "XLA813") == [
        "PJRT_DEVCE is not read by torch_xla (a no-op); did you mean PJRT_DEVICE?"]


SCALER = "import torch\nimport torch_xla\nscaler = torch.cuda.amp.GradScaler()\n"


def test_xla702_without_ddp_names_xm_optimizer_step():
    (message,) = messages(SCALER, "XLA702")
    assert message.endswith("; drop it: loss.backward(), then xm.optimizer_step(optimizer)")


def test_xla702_with_ddp_names_the_plain_step():
    source = SCALER + "from torch.nn.parallel import DistributedDataParallel as DDP\nm = DDP(None)\n"
    (message,) = messages(source, "XLA702")
    assert message.endswith("; drop it: loss.backward(), then optimizer.step()")
