"""setup(): everything the worker needs, built once per process."""
import torch
import torch_xla
import torch_xla.runtime as xr
from torch.utils.data import DataLoader

from data import ReviewDataset
from model import BagClassifier


def setup(cfg):
    torch.manual_seed(cfg.seed + xr.global_ordinal())  # expect: XLA205
    torch_xla.manual_seed(cfg.seed)
    model = BagClassifier(cfg.vocab_size)
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.lr)  # expect: XLA405
    train_ds = ReviewDataset(cfg.train_path)
    valid_ds = ReviewDataset(cfg.valid_path)
    train_loader = DataLoader(train_ds, batch_size=cfg.batch_size, shuffle=True, drop_last=True)  # expect: XLA303
    valid_loader = DataLoader(valid_ds, batch_size=cfg.batch_size)
    return model, optimizer, train_loader, valid_loader
