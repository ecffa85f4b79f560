"""Checkpoint writing and upload, mixed into task classes."""
import os
import subprocess

import torch


class CheckpointMixin:
    ckpt_dir = "checkpoints"
    gcs_bucket = None

    def save_checkpoint(self, epoch, metric):
        os.makedirs(self.ckpt_dir, exist_ok=True)
        path = os.path.join(self.ckpt_dir, f"epoch{epoch:03d}.pt")
        torch.save({"model": self.model.state_dict(), "epoch": epoch, "metric": metric}, path)  # expect: XLA601
        if self.is_master:  # expect: XLA604
            self.upload(path)

    def upload(self, path):
        if self.gcs_bucket:
            subprocess.run(["gsutil", "cp", path, f"gs://{self.gcs_bucket}/"], check=True)

    def export_weights(self, path):
        cpu_state = {k: v.cpu() for k, v in self.model.state_dict().items()}
        torch.save(cpu_state, path)
