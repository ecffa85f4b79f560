import subprocess

import torch
import torch_xla.core.xla_model as xm
from torchvision.utils import save_image


class Hook:
    def after_step(self, trainer, step, d_loss, g_loss):
        pass

    def after_epoch(self, trainer, epoch):
        pass


class LossLogger(Hook):
    def __init__(self, every=50):
        self.every = every

    def _print(self, step, d_loss, g_loss):
        print(f"step {step}: loss_D {d_loss.item():.4f} loss_G {g_loss.item():.4f}")

    def after_step(self, trainer, step, d_loss, g_loss):
        if step % self.every == 0:
            xm.add_step_closure(self._print, args=(step, d_loss, g_loss))


class StepBarrier(Hook):
    """Keeps the replicas in lock-step so that their logs line up."""

    def __init__(self, every=200):
        self.every = every

    def after_step(self, trainer, step, d_loss, g_loss):
        if step % self.every == 0:
            xm.rendezvous("gan-step")  # expect: XLA506


class SampleGrid(Hook):
    def __init__(self, nz, bucket_dir, n=64):
        self.fixed_noise = torch.randn(n, nz, 1, 1)
        self.bucket_dir = bucket_dir

    def after_epoch(self, trainer, epoch):
        if xm.is_master_ordinal():  # expect: XLA604
            with torch.no_grad():
                fake = trainer.netG.module(self.fixed_noise.to(trainer.device))
            local_path = f"/tmp/samples_{epoch:03d}.png"
            save_image(fake.cpu(), local_path, normalize=True)
            subprocess.run(["gsutil", "cp", local_path, f"{self.bucket_dir}/"], check=True)
