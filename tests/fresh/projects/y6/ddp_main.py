"""DDP flavour of the skeleton (torch.distributed over the XLA backend).

    PJRT_DEVICE=TPU python ddp_main.py
"""
import torch.distributed as dist
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.xla_backend  # noqa: F401
from torch.nn.parallel import DistributedDataParallel as DDP

from base import TrainBase
from config import TrainConfig


class TrainDDP(TrainBase):
    def __init__(self, cfg):
        dist.init_process_group("xla", init_method="xla://")
        super().__init__(cfg)
        self.model = DDP(self.model, broadcast_buffers=False, gradient_as_bucket_view=True)

    def save_checkpoint(self, epoch):
        xm.save(self.raw_model.state_dict(), f"{self.cfg.ckpt_dir}/model-{epoch}.pt")
        if xm.is_master_ordinal:  # expect: XLA604
            print(f"saved checkpoint for epoch {epoch}")


def _mp_fn(index, cfg):
    TrainDDP(cfg).start_training()


if __name__ == "__main__":
    torch_xla.launch(_mp_fn, args=(TrainConfig(),))
