import torch
import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr

from .device_env import DeviceEnv


class DeviceEnvXla(DeviceEnv):
    type_xla = True

    def __init__(self, amp=False):
        super().__init__(amp=amp)
        self.device = xm.xla_device()  # expect: XLA804
        self.world_size = xr.world_size()
        self.global_rank = xr.global_ordinal()

    def autocast(self):
        if not self.amp:
            return super().autocast()
        return torch.autocast("xla", dtype=torch.float16)  # expect: XLA703

    def optimizer_step(self, optimizer):
        xm.optimizer_step(optimizer)

    def mark_step(self):
        xm.mark_step()  # expect: XLA805

    def all_reduce(self, tensor, average=True):
        reduced = xm.all_reduce(xm.REDUCE_SUM, tensor)
        return reduced / self.world_size if average else reduced

    def save(self, state, path):
        xm.save(state, path)
