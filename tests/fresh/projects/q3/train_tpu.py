"""ResNet-18 on CIFAR-10 with the callback trainer, on every chip of a TPU VM (or a pod slice).

    python train_tpu.py
"""
import dataclasses
import functools

import torch
import torch.nn.functional as F
import torch_xla.distributed.xla_multiprocessing as xmp
import torch_xla.runtime as xr
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from torchvision import datasets, models, transforms

from cbtrain.guards import CheckpointCallback, GradClipCallback, NaNGuard
from cbtrain.learner import Learner
from cbtrain.metrics import ConfusionCallback, LRMonitor, MetricsCallback, ProgressCallback, ThroughputCallback
from cbtrain.tpu_callbacks import EpochTimer, UploadCallback, WandbCallback


@dataclasses.dataclass
class Config:
    data_root: str = "/mnt/data/cifar10"
    ckpt_dir: str = "/mnt/ckpt/resnet18"
    bucket: str = "gs://team-runs/resnet18"
    batch_size: int = 256
    lr: float = 0.2
    epochs: int = 40
    seed: int = 1234


def _mp_fn(index, cfg):
    torch.manual_seed(cfg.seed + index)  # expect: XLA205
    tf = transforms.Compose([
        transforms.RandomCrop(32, padding=4), transforms.RandomHorizontalFlip(), transforms.ToTensor(),
    ])
    train_ds = datasets.CIFAR10(cfg.data_root, train=True, download=False, transform=tf)
    sampler = DistributedSampler(train_ds, num_replicas=xr.world_size(), rank=xr.global_ordinal(), shuffle=True)
    loader = DataLoader(train_ds, batch_size=cfg.batch_size, sampler=sampler, num_workers=8, drop_last=True)

    model = models.resnet18(num_classes=10)
    callbacks = [
        ThroughputCallback(cfg.batch_size),
        MetricsCallback(),
        ConfusionCallback(10),
        LRMonitor(),
        ProgressCallback(),
        NaNGuard(),
        GradClipCallback(max_norm=2.0),
        CheckpointCallback(cfg.ckpt_dir),
        EpochTimer(),
        WandbCallback(project="cifar-resnet18"),
        UploadCallback(cfg.ckpt_dir, cfg.bucket),
    ]
    learn = Learner(
        model,
        loader,
        F.cross_entropy,
        opt_func=functools.partial(torch.optim.SGD, momentum=0.9, weight_decay=5e-4),
        lr=cfg.lr,
        scheduler_func=lambda opt: torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=cfg.epochs * len(loader)),
        callbacks=callbacks,
    )
    learn.fit(cfg.epochs)


if __name__ == "__main__":
    xmp.spawn(_mp_fn, args=(Config(),))
