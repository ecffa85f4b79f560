# options: --unsafe-fixes
# remains: XLA706
import torch as th
import torch_xla
from transformers import AutoModel

HALF = th.float16


def build(name, batch):
    device = torch_xla.device()
    model = AutoModel.from_pretrained(name, torch_dtype=th.float16)
    other = AutoModel.from_pretrained(name, torch_dtype='float16')
    model = model.to(device).half()
    x = batch.to(device, dtype=th.half)
    y = x.to(HALF)
    return model, other, x, y
