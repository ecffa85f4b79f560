"""On a TPU VM: PJRT_DEVICE=TPU python train_tpu.py"""
import torch
import torch_xla
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from torchvision import datasets, transforms

from config import GANConfig
from dist_utils import get_rank, get_world_size, init_distributed
from hooks import LossLogger, SampleGrid, StepBarrier
from models import Discriminator, Generator
from trainer import GANTrainer


def _mp_fn(index, cfg):
    init_distributed()
    torch.manual_seed(cfg.seed)  # expect: XLA206
    tf = transforms.Compose([transforms.Resize(cfg.image_size), transforms.CenterCrop(cfg.image_size),
                             transforms.ToTensor(), transforms.Normalize((0.5,) * 3, (0.5,) * 3)])
    dataset = datasets.ImageFolder(cfg.data_root, tf)
    sampler = DistributedSampler(dataset, num_replicas=get_world_size(), rank=get_rank(), shuffle=True)
    loader = DataLoader(dataset, batch_size=cfg.batch_size, sampler=sampler, num_workers=cfg.num_workers, drop_last=True)
    hooks = [LossLogger(cfg.log_every), StepBarrier(cfg.sync_every), SampleGrid(cfg.nz, cfg.sample_dir)]
    trainer = GANTrainer(cfg, Generator(cfg.nz, cfg.ngf), Discriminator(cfg.ndf), hooks=hooks)
    trainer.fit(loader)


if __name__ == "__main__":
    torch_xla.launch(_mp_fn, args=(GANConfig(),))
