"""The training loop every backend runs."""
import os
import time

import torch
import torch.nn.functional as F

from modeling import ClickLogDataset, DeepFM


@torch.no_grad()
def evaluate(backend, model, loader):
    model.eval()
    device = backend.device()
    total = torch.zeros((), device=device)
    count = torch.zeros((), device=device)
    for dense, sparse, label in loader:
        dense, sparse, label = dense.to(device), sparse.to(device), label.to(device)
        logits = model(dense, sparse)
        total += F.binary_cross_entropy_with_logits(logits, label, reduction="sum")
        count += label.numel()
    return backend.all_reduce_mean(total / count).item()


def worker(index, backend, cfg):
    backend.setup(index)
    device = backend.device()
    model = backend.wrap_model(DeepFM(cfg.num_dense, cfg.cardinalities, cfg.embed_dim))
    optimizer = torch.optim.Adagrad(model.parameters(), lr=cfg.lr * backend.world_size())
    train_loader = backend.make_loader(ClickLogDataset(cfg.train_path), cfg.batch_size)
    val_loader = backend.make_loader(ClickLogDataset(cfg.val_path), cfg.batch_size, train=False)
    os.makedirs(cfg.out_dir, exist_ok=True)
    best = float("inf")
    for epoch in range(cfg.epochs):
        model.train()
        if hasattr(train_loader.sampler, "set_epoch"):
            train_loader.sampler.set_epoch(epoch)
        backend.synchronize()
        t0 = time.perf_counter()
        for step, (dense, sparse, label) in enumerate(train_loader):  # expect: XLA301
            dense, sparse, label = dense.to(device), sparse.to(device), label.to(device)
            with backend.autocast():
                loss = F.binary_cross_entropy_with_logits(model(dense, sparse), label)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            backend.step(optimizer)
            if step % cfg.log_every == 0:
                backend.log(f"epoch {epoch} step {step} loss {loss:.4f}")  # expect: XLA507
        backend.synchronize()
        elapsed = time.perf_counter() - t0
        val_loss = evaluate(backend, model, val_loader)
        backend.log(f"epoch {epoch}: {len(train_loader) / elapsed:.1f} it/s, val logloss {val_loss:.5f}")
        if val_loss < best and backend.is_main():
            best = val_loss
            torch.save(model.state_dict(), os.path.join(cfg.out_dir, "best.pt"))  # expect: XLA601
        backend.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch},
                     os.path.join(cfg.out_dir, "last.pt"))
