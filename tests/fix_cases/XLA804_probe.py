# torch_xla imported only in the probe's block: `import torch_xla` joins it there (issue 30.6)
import torch
from torch.nn.parallel import DistributedDataParallel as DDP

try:
    import torch_xla.core.xla_model as xm  # an availability probe: no fix adds an unconditional torch_xla import
    HAS_XLA = True
except ImportError:
    HAS_XLA = False


def place(model):
    if not HAS_XLA:
        return model.cuda()
    return DDP(model.to(xm.xla_device()))
