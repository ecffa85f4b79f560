"""CPU and TPU runners. Both register themselves; conf.BACKEND chooses one."""
import torch
import torch_xla
import torch_xla.core.xla_model as xm

from common import local_rank_from_env, xla_device_for
from registry import register


@register("cpu")
class CPURunner:
    def __init__(self, cfg):
        self.cfg = cfg
        self.device = torch.device("cpu")

    def launch(self, fn):
        fn(0, self)

    def setup(self, index):
        pass

    def optimizer_step(self, optimizer):
        optimizer.step()

    def is_master(self):
        return True

    def save(self, model):
        torch.save(model.state_dict(), self.cfg.ckpt_path)


@register("tpu")
class TPURunner(CPURunner):
    def __init__(self, cfg):
        super().__init__(cfg)
        self.device = torch_xla.device()

    def launch(self, fn):
        torch_xla.launch(fn, args=(self,))

    def setup(self, index):
        self.local_rank = local_rank_from_env()
        self.device = xla_device_for(self.local_rank)

    def optimizer_step(self, optimizer):
        # plain DataLoader below, so the barrier is our per-step graph cut
        xm.optimizer_step(optimizer, barrier=True)

    def is_master(self):
        return xm.get_ordinal() == 0  # expect: XLA802

    def save(self, model):
        if self.is_master():
            torch.save(model.state_dict(), self.cfg.ckpt_path)  # expect: XLA601
