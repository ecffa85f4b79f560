"""Data-parallel GAN training: one process per TPU chip."""
import os

import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.runtime as xr
import torchvision
import torchvision.transforms as T
from torch.utils.data import DataLoader, DistributedSampler

from .nets import Discriminator, Generator
from .steps import discriminator_loss, generator_step
from .utils import backward_and_flush, save_checkpoint, set_seed


def train_worker(index, cfg):
    set_seed(cfg.seed)
    device = torch_xla.device()
    tf = T.Compose([T.Resize(64), T.CenterCrop(64), T.ToTensor(), T.Normalize((0.5,) * 3, (0.5,) * 3)])
    dataset = torchvision.datasets.ImageFolder(cfg.data_root, transform=tf)
    sampler = DistributedSampler(dataset, num_replicas=xr.world_size(), rank=xr.global_ordinal(), shuffle=True)
    loader = DataLoader(dataset, batch_size=cfg.batch_size, sampler=sampler, num_workers=cfg.workers, drop_last=True)
    device_loader = pl.MpDeviceLoader(loader, device)

    gen = Generator(cfg.nz).to(device)
    disc = Discriminator().to(device)
    xm.broadcast_master_param(gen)
    xm.broadcast_master_param(disc)
    opt_g = torch.optim.Adam(gen.parameters(), lr=cfg.lr, betas=(0.0, 0.9))
    opt_d = torch.optim.Adam(disc.parameters(), lr=cfg.lr * 4, betas=(0.0, 0.9))
    fixed_z = torch.randn(64, cfg.nz, device=device)

    for epoch in range(cfg.epochs):
        sampler.set_epoch(epoch)
        gen.train()
        disc.train()
        for step, (real, labels) in enumerate(device_loader):
            z = torch.randn(real.size(0), cfg.nz, device=device)
            opt_d.zero_grad()
            d_loss = discriminator_loss(disc, gen, real, z, labels)
            backward_and_flush(d_loss)
            xm.optimizer_step(opt_d)
            g_loss = generator_step(gen, disc, z, opt_g)
        if xm.is_master_process():  # expect: XLA812
            print(f"epoch {epoch}: d_loss {d_loss.item():.3f} g_loss {g_loss.item():.3f}")
        gen.eval()
        with torch.no_grad():
            grid = gen(fixed_z).cpu()
        if xr.global_ordinal() == 0:
            torchvision.utils.save_image(grid, os.path.join(cfg.out_dir, f"samples_{epoch:03d}.png"), normalize=True)
        save_checkpoint(gen, disc, opt_g, opt_d, os.path.join(cfg.out_dir, "last.pt"))
