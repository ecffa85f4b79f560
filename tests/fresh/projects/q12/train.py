import os

import torch
import torch_xla.core.xla_model as xm
import torch_xla.distributed.xla_multiprocessing as xmp

from configs import TrainConfig
from datamod import make_loader
from helpers import evaluate, train_epoch, upload
from zoo import build_model


def _mp_fn(index, cfg):
    torch.manual_seed(cfg.seed)
    xm.set_rng_state(cfg.seed)
    device = xm.xla_device()  # expect: XLA804
    model = build_model(cfg.model).to(device)
    model.tie_weights()
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    train_loader = make_loader(cfg.data, "train")
    val_loader = make_loader(cfg.data, "val")

    best_acc = 0.0
    os.makedirs(cfg.out_dir, exist_ok=True)
    for epoch in range(cfg.epochs):
        train_loss = train_epoch(model, train_loader, optimizer, device, xm)
        acc = evaluate(model, val_loader, device)
        xm.master_print(f"epoch {epoch} loss {train_loss:.4f} val_acc {acc:.4f}")
        if xm.is_master_ordinal() and acc > best_acc:
            best_acc = acc
            xm.save(model.state_dict(), os.path.join(cfg.out_dir, "best.pt"))  # expect: XLA602
    if xm.is_master_ordinal():  # expect: XLA604
        upload(cfg.out_dir, cfg.bucket)


if __name__ == "__main__":
    xmp.spawn(_mp_fn, args=(TrainConfig(),), nprocs=TrainConfig().num_cores)  # expect: XLA001
