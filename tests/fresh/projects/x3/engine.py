"""Model, data and the epoch loop; the device comes from device_utils."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, DistributedSampler
from torchvision import datasets, transforms

import device_utils
from meters import AverageMeter, StepTimer


def create_model(num_classes):
    return nn.Sequential(
        nn.Conv2d(3, 32, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(64, num_classes),
    )


def create_loader(cfg):
    ds = datasets.CIFAR10(cfg.data_dir, train=True, download=False, transform=transforms.ToTensor())
    sampler = DistributedSampler(
        ds, num_replicas=device_utils.get_world_size(), rank=device_utils.get_rank(), shuffle=True
    )
    per_device = cfg.global_batch // torch.cuda.device_count()  # expect: XLA110
    loader = DataLoader(ds, batch_size=per_device, sampler=sampler, num_workers=cfg.workers, drop_last=True)
    return device_utils.wrap_loader(loader), sampler


def train(cfg):
    model = create_model(cfg.num_classes)
    optimizer = torch.optim.SGD(model.parameters(), lr=cfg.lr, momentum=0.9)  # expect: XLA405
    model = model.to(device_utils.get_device())
    loader, sampler = create_loader(cfg)
    loss_meter = AverageMeter()
    timer = StepTimer()
    for epoch in range(cfg.epochs):
        sampler.set_epoch(epoch)
        model.train()
        loss_meter.reset()
        for step, (images, target) in enumerate(loader):
            timer.start()
            loss = F.cross_entropy(model(images), target)
            optimizer.zero_grad()
            loss.backward()
            device_utils.optimizer_step(optimizer)
            step_time = timer.stop()
            loss_meter.update(loss.detach(), images.shape[0])
            if step % cfg.log_every == 0 and device_utils.get_rank() == 0:
                print(f"epoch {epoch} step {step}: {step_time * 1000:.1f} ms/step")
        if device_utils.get_rank() == 0:
            print(f"epoch {epoch}: mean loss {loss_meter.avg:.4f}")
