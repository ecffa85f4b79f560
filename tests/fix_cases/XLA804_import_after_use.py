# remains: XLA804
import torch_xla.core.xla_model as xm
device = xm.xla_device()  # runs before `import torch_xla` below: no fix may spell torch_xla here
import torch_xla


def later():
    return xm.xla_device()  # runs when called: torch_xla is bound by then
