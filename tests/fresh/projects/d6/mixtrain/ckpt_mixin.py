"""CheckpointMixin: one checkpoint file per epoch."""
import os

import torch_xla.core.xla_model as xm


class CheckpointMixin:
    def checkpoint_path(self, epoch):
        return os.path.join(self.cfg.ckpt_dir, f"epoch{epoch:03d}.pt")

    def save_checkpoint(self, epoch):
        state = {
            "model": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "epoch": epoch,
            "global_step": self.global_step,
        }
        xm.save(state, self.checkpoint_path(epoch))  # expect: XLA603
