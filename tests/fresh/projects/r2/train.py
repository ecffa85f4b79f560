"""Train ResNet-9 on the back-end named in config.BACKEND.

    python train.py
"""
import os
import time

import torch
from torch.utils.data import DataLoader

import config
from accel import get_accelerator
from common import SyntheticImages, log_memory, upload_checkpoint
from engine import evaluate, save_checkpoint, train_one_epoch
from models import ResNet9


def _worker(index):
    acc = get_accelerator(config.BACKEND)
    train_ds = SyntheticImages(config.NUM_TRAIN, config.NUM_CLASSES, seed=0)
    val_ds = SyntheticImages(config.NUM_VAL, config.NUM_CLASSES, seed=1)
    train_sampler = acc.sampler(train_ds)
    train_loader = DataLoader(train_ds, batch_size=config.BATCH_SIZE, sampler=train_sampler, num_workers=config.NUM_WORKERS)  # expect: XLA304
    val_loader = DataLoader(
        val_ds, batch_size=config.BATCH_SIZE, sampler=acc.sampler(val_ds, shuffle=False)
    )

    model = ResNet9(num_classes=config.NUM_CLASSES)
    optimizer = torch.optim.SGD(model.parameters(), lr=config.LR, momentum=config.MOMENTUM, weight_decay=config.WEIGHT_DECAY, nesterov=True)  # expect: XLA405
    model = acc.prepare_model(model)

    train_batches = acc.wrap_loader(train_loader)
    val_batches = acc.wrap_loader(val_loader)
    for epoch in range(config.EPOCHS):
        train_sampler.set_epoch(epoch)
        t0 = time.time()
        seen = train_one_epoch(acc, model, train_batches, optimizer, epoch, config.LOG_EVERY)
        val_acc = acc.reduce_mean("val_acc", evaluate(acc, model, val_batches))
        elapsed = time.time() - t0
        path = os.path.join(config.CKPT_DIR, f"epoch{epoch:03d}.pt")
        save_checkpoint(model, optimizer, epoch, path)
        if acc.is_main_process():  # expect: XLA604
            upload_checkpoint(path, config.GCS_DIR)
            print(f"epoch {epoch}: {seen / elapsed:.0f} img/s per replica, val acc {val_acc:.3f}")
        log_memory(f"epoch {epoch}")


if __name__ == "__main__":
    get_accelerator(config.BACKEND).launch(_worker)
