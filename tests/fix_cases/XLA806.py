# options: --xla-version=2.4
import torch_xla
import torch_xla.experimental.pjrt as pjrt


def info():
    return pjrt.world_size(), pjrt.global_ordinal(), pjrt.device_type(), pjrt.xla_device()
