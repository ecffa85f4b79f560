"""Generator weights and sample grids on disk."""
import os

import torch
import torchvision.utils as vutils


def export_generator(netG, path):
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    torch.save(netG.state_dict(), path)  # expect: XLA601


def load_generator(netG, path):
    netG.load_state_dict(torch.load(path, map_location="cpu"))
    return netG


def save_grid(images, path, nrow=8):
    vutils.save_image(images.cpu(), path, nrow=nrow, normalize=True, value_range=(-1, 1))
