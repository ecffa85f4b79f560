# Mixed precision ported from a CUDA recipe to a single TPU device.
import os

os.environ["XLA_USE_BF16"] = "1"  # expect: XLA705
os.environ["PJRT_DEVICE"] = "TPU"

import torch
import torch.nn as nn
import torch_xla
import torch_xla.distributed.parallel_loader as pl
from torch.utils.data import DataLoader, TensorDataset


class ConvClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.AdaptiveAvgPool2d(4))
        self.head = nn.Linear(64 * 16, 100)

    def forward(self, x):
        return self.head(self.features(x).flatten(1))


def train_cuda_recipe(model, loader, device):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    scaler = torch.cuda.amp.GradScaler()  # expect: XLA702
    for x, y in pl.MpDeviceLoader(loader, device):
        optimizer.zero_grad()
        with torch.cuda.amp.autocast():  # expect: XLA701
            loss = nn.functional.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()


def train_fp16_autocast(model, loader, device):
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    for x, y in pl.MpDeviceLoader(loader, device):
        optimizer.zero_grad()
        with torch.autocast("xla", dtype=torch.float16):  # expect: XLA703
            loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()


def train_bf16(model, loader, device):
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    for x, y in pl.MpDeviceLoader(loader, device):
        optimizer.zero_grad()
        with torch.autocast("xla", dtype=torch.bfloat16):
            loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()


def main(recipe="bf16"):
    device = torch_xla.device()
    model = ConvClassifier().to(device)
    if recipe == "half":
        model = model.half()  # expect: XLA706
    data = TensorDataset(torch.randn(10000, 3, 32, 32), torch.randint(0, 100, (10000,)))
    loader = DataLoader(data, batch_size=128, shuffle=True, drop_last=True)
    if recipe == "cuda":
        train_cuda_recipe(model, loader, device)
    elif recipe == "fp16":
        train_fp16_autocast(model, loader, device)
    else:
        train_bf16(model, loader, device)
    exported = {k: v.to("cpu", dtype=torch.float16) for k, v in model.state_dict().items()}
    torch.save(exported, "classifier_fp16_export.pt")


if __name__ == "__main__":
    main()
