import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
from torch.nn.parallel import DistributedDataParallel as DDP

from common.data import build_loader
from common.dist import get_rank_and_world, init_distributed
from common.utils import seed_all
from model import CharRNN
from train_loop import train_one_epoch


def _mp_fn(index, cfg):
    seed_all(cfg["seed"])
    rank, world = get_rank_and_world()
    init_distributed("xla", rank, world)
    device = torch_xla.device()
    model = CharRNN(dropout=0.2).to(device)
    model = DDP(model)  # expect: XLA101
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg["lr"] * torch.cuda.device_count())  # expect: XLA110
    loader, sampler = build_loader(cfg["data"], cfg["batch_size"], rank, world)
    device_loader = pl.MpDeviceLoader(loader, device)
    for epoch in range(cfg["epochs"]):
        sampler.set_epoch(epoch)
        train_one_epoch(model, device_loader, optimizer, device, epoch, show=xm.is_master_ordinal())
        xm.rendezvous(f"epoch_{epoch}_done")
        xm.save(model.module.state_dict(), f"ckpt/tpu_epoch{epoch}.pt")


def launch(cfg):
    torch_xla.launch(_mp_fn, args=(cfg,))
