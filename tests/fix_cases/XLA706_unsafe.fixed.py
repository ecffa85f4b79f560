# options: --unsafe-fixes
# remains: XLA706
import torch as th
import torch_xla
from transformers import AutoModel

HALF = th.float16


def build(name, batch):
    device = torch_xla.device()
    model = AutoModel.from_pretrained(name, torch_dtype=th.bfloat16)
    other = AutoModel.from_pretrained(name, torch_dtype='bfloat16')
    model = model.to(device).bfloat16()
    x = batch.to(device, dtype=th.bfloat16)
    y = x.to(HALF)
    return model, other, x, y
