"""Meters, logging and checkpoint helpers (shape of vit_10b_fsdp_example/utils.py)."""
import os
import subprocess
import time
from collections import defaultdict

import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr


def get_world_size():
    return xr.world_size()


def is_main_process():
    return xm.is_master_ordinal()


class SmoothedValue:
    def __init__(self, window=20):
        self.window = window
        self.values = []

    def update(self, value):
        self.values.append(value)
        self.values = self.values[-self.window:]

    @property
    def avg(self):
        return sum(self.values) / max(len(self.values), 1)


class MetricLogger:
    def __init__(self, delimiter="  "):
        self.meters = defaultdict(SmoothedValue)
        self.delimiter = delimiter

    def update(self, **kwargs):
        for k, v in kwargs.items():
            if isinstance(v, torch.Tensor):
                v = v.item()  # expect: XLA501
            self.meters[k].update(v)

    def __str__(self):
        return self.delimiter.join(f"{k}: {m.avg:.4f}" for k, m in self.meters.items())


class Timer:
    def __init__(self):
        self.start = time.time()

    def elapsed(self):
        torch_xla.sync(wait=True)
        return time.time() - self.start


def save_sharded(model, optimizer, ckpt_dir, epoch):
    rank, world = xr.global_ordinal(), xr.world_size()
    ckpt = {
        "model": model.state_dict(),
        "shard_metadata": model.get_shard_metadata(),
        "optimizer": optimizer.state_dict(),
        "epoch": epoch,
    }
    path = os.path.join(ckpt_dir, f"epoch{epoch}_rank-{rank:08d}-of-{world:08d}.pth")
    xm.save(ckpt, path, master_only=False)


def save_for_eval(model, ckpt_dir):
    xm.save({"model": model.state_dict()}, os.path.join(ckpt_dir, "final.pth"))  # expect: XLA603


def upload_to_gcs(local_dir, gcs_dir):
    subprocess.run(["gsutil", "-m", "cp", "-r", local_dir, gcs_dir], check=False)
