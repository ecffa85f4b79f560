"""Synthetic ImageNet-shaped data for throughput runs."""
import torch
from torch.utils.data import DataLoader, TensorDataset


def build_train_loader(cfg):
    images = torch.randn(cfg.num_samples, 3, cfg.image_size, cfg.image_size)
    labels = torch.randint(0, cfg.num_classes, (cfg.num_samples,))
    dataset = TensorDataset(images, labels)
    return DataLoader(dataset, batch_size=cfg.batch_size, shuffle=True, num_workers=2, drop_last=True)  # expect: XLA303
