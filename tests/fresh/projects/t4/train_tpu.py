"""PJRT_DEVICE=TPU python train_tpu.py --data tokens.pt --vocab 32000"""
import argparse

import torch
import torch_xla
import torch_xla.distributed.parallel_loader as pl
import torch_xla.runtime as xr
from torch.utils.data import DataLoader

import plugins.alerts  # noqa: F401  (subscribes the event handlers)
from model_data import ShardedTokens, TinyLM
from plugins import PluginManager
from plugins.checkpoint import Checkpointer
from plugins.console import ConsoleLogger, LossHistory, Throughput
from plugins.tracking import WandbTracker
from trainer import StepTrainer


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True)
    p.add_argument("--vocab", type=int, default=32000)
    p.add_argument("--seq-len", dest="seq_len", type=int, default=256)
    p.add_argument("--batch-size", dest="batch_size", type=int, default=32)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--log-every", dest="log_every", type=int, default=20)
    p.add_argument("--save-every", dest="save_every", type=int, default=1000)
    p.add_argument("--out-dir", dest="out_dir", default="ckpt")
    return p.parse_args()


def _mp_fn(index, args):
    device = torch_xla.device()
    ds = ShardedTokens(args.data, args.seq_len, xr.global_ordinal(), xr.world_size())
    loader = DataLoader(ds, batch_size=args.batch_size, shuffle=True, drop_last=True, num_workers=2)
    model = TinyLM(args.vocab, seq_len=args.seq_len).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.1)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs * len(loader))
    plugins = PluginManager([
        ConsoleLogger(args.log_every),
        LossHistory(),
        Throughput(args.batch_size),
        WandbTracker("tinylm", vars(args)),
        Checkpointer(args.out_dir, args.save_every),
    ])
    trainer = StepTrainer(model, optimizer, plugins, scheduler)
    trainer.fit(pl.MpDeviceLoader(loader, device), args.epochs)


if __name__ == "__main__":
    torch_xla.launch(_mp_fn, args=(parse_args(),))
