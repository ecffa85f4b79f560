"""v3-8 image training: epoch 1 trains, every later epoch finishes instantly with 0 steps
(transformers#4467 shape: the per-device loader is built once and is one-shot).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.runtime as xr
from torch.utils.data import DataLoader, DistributedSampler
from torchvision import datasets, models, transforms


def _mp_fn(index, data_dir):
    device = torch_xla.device()
    tf = transforms.Compose([transforms.RandomResizedCrop(160), transforms.ToTensor()])
    train_set = datasets.ImageFolder(data_dir, transform=tf)
    sampler = DistributedSampler(train_set, num_replicas=xr.world_size(), rank=xr.global_ordinal(), shuffle=True)
    loader = DataLoader(train_set, batch_size=64, sampler=sampler, num_workers=8, drop_last=True)
    model = models.resnet18(num_classes=len(train_set.classes)).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    para_loader = pl.ParallelLoader(loader, [device])  # expect: XLA306
    train_batches = para_loader.per_device_loader(device)
    for epoch in range(30):
        sampler.set_epoch(epoch)
        model.train()
        steps = 0
        for images, labels in train_batches:
            opt.zero_grad()
            loss = F.cross_entropy(model(images), labels)
            loss.backward()
            xm.optimizer_step(opt)
            steps += 1
        xm.master_print(f"epoch {epoch}: {steps} steps")


if __name__ == "__main__":
    torch_xla.launch(_mp_fn, args=("/data/imagenette/train",))
