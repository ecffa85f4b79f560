import os

import torch
import torch.nn.functional as F

from data import build_datasets, build_loader
from model import ConvNet

CONFIG = {
    "data_dir": "/data/cifar10",
    "num_classes": 10,
    "batch_size": 128,
    "epochs": 30,
    "lr": 0.1,
    "seed": 17,
    "out_dir": "checkpoints",
}


def evaluate(strategy, model, val_loader):
    model.eval()
    correct = torch.zeros((), device=strategy.device)
    seen = 0
    with torch.no_grad():
        for images, targets in strategy.device_loader(val_loader):
            logits = model(images)
            correct += (logits.argmax(dim=1) == targets).sum()
            seen += targets.size(0)
    return strategy.reduce_mean(correct / max(seen, 1))


def run(strategy, cfg):
    strategy.setup()
    torch.manual_seed(cfg["seed"])
    model = ConvNet(num_classes=cfg["num_classes"])
    optimizer = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9, nesterov=True)  # expect: XLA405
    model = strategy.wrap_model(model)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=cfg["epochs"])

    train_ds, val_ds = build_datasets(cfg["data_dir"])
    sampler = strategy.make_sampler(train_ds)
    train_loader = build_loader(train_ds, cfg["batch_size"], sampler=sampler)
    val_loader = build_loader(val_ds, cfg["batch_size"], shuffle=False)
    train_batches = strategy.device_loader(train_loader)

    for epoch in range(cfg["epochs"]):
        sampler.set_epoch(epoch)
        model.train()
        losses = []
        for step, (images, targets) in enumerate(train_batches):
            with torch.autocast("cuda", dtype=torch.bfloat16):  # expect: XLA701
                logits = model(images)
                loss = F.cross_entropy(logits, targets)
            if not torch.isfinite(loss):  # expect: XLA502
                optimizer.zero_grad(set_to_none=True)
                continue
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), strategy.grad_clip)
            strategy.optimizer_step(optimizer)
            optimizer.zero_grad(set_to_none=True)
            losses.append(strategy.reduce_mean(loss.detach()))
        scheduler.step()
        acc = evaluate(strategy, model, val_loader)
        print(f"epoch {epoch}: loss {sum(losses) / max(len(losses), 1):.4f} acc {acc:.4f}")
        strategy.save({"model": model.state_dict(), "epoch": epoch},
                      os.path.join(cfg["out_dir"], f"epoch{epoch}.pt"))
        strategy.barrier()

    if strategy.rank == 0:
        torch.save(model.module.state_dict(), os.path.join(cfg["out_dir"], "final.pt"))  # expect: XLA601
