"""ViT-ish CIFAR-100 training with XLA FSDP on a TPU pod slice.

    python run_tpu.py          # on every host of the slice (gcloud ... ssh --worker=all)
"""
import torch.nn as nn
import torch_xla
import torchvision
import torchvision.transforms as T

from mixtrain import Trainer, TrainerConfig

MEAN, STD = (0.5071, 0.4865, 0.4409), (0.2673, 0.2564, 0.2762)


class ConvMixer(nn.Module):
    def __init__(self, dim=512, depth=12, kernel=7, patch=2, num_classes=100, drop=0.1):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, dim, patch, stride=patch), nn.GELU(), nn.BatchNorm2d(dim))
        self.blocks = nn.Sequential(*[
            nn.Sequential(
                nn.Conv2d(dim, dim, kernel, groups=dim, padding="same"), nn.GELU(), nn.BatchNorm2d(dim),
                nn.Conv2d(dim, dim, 1), nn.GELU(), nn.BatchNorm2d(dim),
            )
            for _ in range(depth)
        ])
        self.head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(drop), nn.Linear(dim, num_classes))

    def forward(self, x):
        return self.head(self.blocks(self.stem(x)))


def _mp_fn(index, cfg):
    train_tf = T.Compose([T.RandomCrop(32, padding=4), T.RandomHorizontalFlip(), T.ToTensor(), T.Normalize(MEAN, STD)])
    val_tf = T.Compose([T.ToTensor(), T.Normalize(MEAN, STD)])
    train_set = torchvision.datasets.CIFAR100("/mnt/data", train=True, transform=train_tf)
    val_set = torchvision.datasets.CIFAR100("/mnt/data", train=False, transform=val_tf)
    Trainer(ConvMixer, train_set, val_set, cfg).fit()


if __name__ == "__main__":
    torch_xla.launch(_mp_fn, args=(TrainerConfig(),))
