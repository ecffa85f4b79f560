"""Seeding, as in nanoGPT: a different seed on every process."""
import torch
import torch_xla


def seed_for_rank(rank, base=1337):
    torch.manual_seed(base + rank)  # expect: XLA205
    torch_xla.manual_seed(base + rank)
