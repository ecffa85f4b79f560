"""fp16 recipe carried over from an A100 run to a single TPU v5e chip.

Reported: NaNs after a few hundred steps; XLA_USE_F16 seems to do nothing.
"""
import os

os.environ["XLA_USE_F16"] = "1"  # expect: XLA813
os.environ["XLA_DOWNCAST_BF16"] = "1"  # expect: XLA705
os.environ.setdefault("PJRT_DEVICE", "TPU")

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch_xla
import torch_xla.distributed.parallel_loader as pl
from torch.utils.data import DataLoader, TensorDataset


class ConvClassifier(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(),
            nn.Conv2d(64, 128, 3, padding=1, stride=2), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1),
        )
        self.fc = nn.Linear(128, classes)

    def forward(self, x):
        return self.fc(self.features(x).flatten(1))


def train(model, loader, device, epochs=5):
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    scaler = torch.cuda.amp.GradScaler()  # expect: XLA702
    for epoch in range(epochs):
        for images, labels in pl.MpDeviceLoader(loader, device):
            opt.zero_grad()
            with torch.cuda.amp.autocast():  # expect: XLA701
                loss = F.cross_entropy(model(images), labels)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()


@torch.no_grad()
def predict(model, images, device):
    with torch.autocast("xla", dtype=torch.float16):  # expect: XLA703
        return model(images.to(device)).argmax(-1).cpu()


@torch.no_grad()
def predict_bf16(model, images, device):
    with torch.autocast("xla", dtype=torch.bfloat16):
        return model(images.to(device)).argmax(-1).cpu()


def serving_copy(model, device):
    fast = ConvClassifier().to(device).half()  # expect: XLA706
    fast.load_state_dict(model.state_dict())
    return fast


def export(model, path):
    torch.save(model.cpu().half().state_dict(), path)


def main():
    device = torch_xla.device()
    blob = torch.load("cifar_train.pt")
    loader = DataLoader(TensorDataset(blob["images"], blob["labels"]), batch_size=256,
                        shuffle=True, drop_last=True)
    model = ConvClassifier().to(device)
    train(model, loader, device)
    print(predict(model, blob["images"][:16], device))
    print(predict_bf16(model, blob["images"][:16], device))
    fast = serving_copy(model, device)
    print(sum(p.numel() for p in fast.parameters()))
    export(model, "model_fp16.pt")


if __name__ == "__main__":
    main()
