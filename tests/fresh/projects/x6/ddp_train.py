"""DDP entry point: one process per chip through torch_xla.launch.

    PJRT_DEVICE=TPU python ddp_train.py
"""
import os

import torch
import torch.distributed as dist
import torch_xla
import torch_xla.distributed.parallel_loader as pl
import torch_xla.runtime as xr
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler

from common import DecoderOnly, TokenFile, log_metrics, parse_args, save_checkpoint, train_step


def _mp_fn(index, args):
    os.environ["MASTER_PORT"] = "12355"  # expect: XLA103
    dist.init_process_group("xla", init_method="xla://")
    device = torch_xla.device()
    model = DDP(DecoderOnly().to(device), gradient_as_bucket_view=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    ds = TokenFile(args.data, args.seq_len)
    sampler = DistributedSampler(ds, shuffle=True)
    loader = DataLoader(ds, batch_size=args.global_batch // xr.world_size(), sampler=sampler, drop_last=True)
    train_loader = pl.MpDeviceLoader(loader, device)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for step, batch in enumerate(train_loader):
            loss = train_step(model, batch, optimizer, args.max_norm)
            log_metrics(step, loss)
        if xr.global_ordinal() == 0:
            save_checkpoint(model.module, f"{args.ckpt_dir}/epoch{epoch}.pt")


if __name__ == "__main__":
    torch_xla.launch(_mp_fn, args=(parse_args(),))
