"""The training engine, shared by both backends. Nothing here imports torch_xla or assumes CUDA."""
import os

import torch
import torch.nn.functional as F
import torchvision
import torchvision.transforms as T
from torch.utils.data import DataLoader

from .model import build_model
from .timer import StepTimer

MEAN, STD = (0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616)


def datasets(root):
    train_tf = T.Compose([T.RandomCrop(32, padding=4), T.RandomHorizontalFlip(), T.ToTensor(), T.Normalize(MEAN, STD)])
    test_tf = T.Compose([T.ToTensor(), T.Normalize(MEAN, STD)])
    train = torchvision.datasets.CIFAR10(root, train=True, download=False, transform=train_tf)
    test = torchvision.datasets.CIFAR10(root, train=False, download=False, transform=test_tf)
    return train, test


def evaluate(model, loader, device):
    model.eval()
    correct, total = 0, 0
    with torch.no_grad():
        for images, labels in loader:
            images, labels = images.to(device), labels.to(device)
            correct += (model(images).argmax(dim=1) == labels).sum().item()
            total += labels.size(0)
    model.train()
    return correct / max(total, 1)


def train(backend, cfg):
    backend.setup()
    model = backend.wrap(build_model())
    if cfg.compile:
        model = torch.compile(model, backend=backend.dynamo_backend)
    optimizer = torch.optim.SGD(model.parameters(), lr=cfg.lr, momentum=0.9, nesterov=True, weight_decay=5e-4)

    train_set, test_set = datasets(cfg.data)
    sampler = backend.sampler(train_set)
    loader = backend.loader(DataLoader(train_set, batch_size=cfg.batch_size, sampler=sampler,
                                       num_workers=cfg.workers, drop_last=True))
    timer = StepTimer()
    losses = []
    for epoch in range(cfg.epochs):
        sampler.set_epoch(epoch)
        model.train()
        for step, (images, labels) in enumerate(loader):
            timer.start()
            images, labels = images.to(backend.device), labels.to(backend.device)
            with backend.autocast():
                loss = F.cross_entropy(model(images), labels, label_smoothing=0.1)
            if not torch.isfinite(loss):  # expect: XLA502
                optimizer.zero_grad(set_to_none=True)
                continue
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            backend.mark_step()
            step_time = timer.stop()
            losses.append(loss.detach().cpu())  # expect: XLA501
            if step % cfg.log_every == 0 and backend.is_main():
                print(f"epoch {epoch} step {step}: {step_time * 1e3:.1f} ms/step")

        if backend.is_main() and (epoch + 1) % cfg.eval_every == 0:
            test_loader = DataLoader(test_set, batch_size=512, num_workers=cfg.workers)
            acc = evaluate(model.module, test_loader, backend.device)
            print(f"epoch {epoch}: test acc {acc:.4f}, mean step {timer.mean_ms():.1f} ms")
            backend.barrier()
        backend.save({"model": model.state_dict(), "epoch": epoch}, os.path.join(cfg.out, "last.pt"))
    backend.teardown()
    return torch.stack(losses).mean().item() if losses else float("nan")
