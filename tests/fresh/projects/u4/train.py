"""Distil a 12-layer teacher into a 6-layer student on TPU (one process per chip).

    python train.py
"""
import os

import torch
import torch.nn.functional as F
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl

from config import Config
from data import TokenCounter, get_dataloaders
from evaluate import evaluate
from model import TinyLM, distill_loss


def calibrate_head(model, loader, device, steps, lr):
    """A few steps on labelled pairs so that the classification head starts sensible."""
    opt = torch.optim.SGD(model.head.parameters(), lr=lr)
    model.train()
    for step, batch in enumerate(loader):
        ids, labels = batch["input_ids"].to(device), batch["labels"].to(device)
        loss = F.cross_entropy(model.classify(ids), labels)
        loss.backward()
        xm.optimizer_step(opt)
        opt.zero_grad(set_to_none=True)
        if step + 1 == steps:
            break


def _log(epoch, step, loss, counter):
    print(f"epoch {epoch} step {step} loss {loss.item():.4f} tok/s {counter.rate():.0f}", flush=True)


def train_epoch(model, batches, opt, counter, log_every, epoch):
    model.train()
    for step, batch in enumerate(batches):
        logits = model(batch["input_ids"], batch["attention_mask"])
        loss = distill_loss(logits, batch["soft_labels"], batch["attention_mask"])
        loss.backward()
        xm.optimizer_step(opt)
        opt.zero_grad(set_to_none=True)
        counter.update(batch)
        if step % log_every == 0:
            xm.add_step_closure(_log, args=(epoch, step, loss, counter))


def _mp_fn(index, cfg):
    torch.manual_seed(cfg.seed)
    torch_xla.manual_seed(cfg.seed)
    device = xm.xla_device()  # expect: XLA804

    teacher = TinyLM(cfg.vocab_size, cfg.teacher_dim, cfg.teacher_layers)
    teacher.load_state_dict(torch.load(cfg.teacher_ckpt, map_location="cpu"))
    teacher = teacher.to(device)
    teacher.eval()
    model = TinyLM(cfg.vocab_size, cfg.dim, cfg.layers).to(device)
    xm.broadcast_master_param(model)

    loaders = get_dataloaders(cfg, teacher)
    calibrate_head(model, loaders["calib"], device, cfg.calib_steps, cfg.lr)  # expect: XLA301

    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=0.01)
    train_batches = pl.MpDeviceLoader(loaders["train"], device)
    counter = TokenCounter()
    for epoch in range(cfg.epochs):
        train_epoch(model, train_batches, opt, counter, cfg.log_every, epoch)
        val_nll, val_ppl = evaluate(model, loaders["val"], device)
        xm.master_print(f"epoch {epoch}: val nll {val_nll:.4f} ppl {val_ppl:.1f}, {counter.rate():.0f} tok/s")
        xm.save(model.state_dict(), os.path.join(cfg.out_dir, f"student_epoch{epoch}.pt"))


if __name__ == "__main__":
    torch_xla.launch(_mp_fn, args=(Config(),))
