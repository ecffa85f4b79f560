"""The user's model and data for the minilight MNIST example."""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

from minilight import LightModule


class LitClassifier(LightModule):
    def __init__(self, in_dim=784, hidden=512, classes=10, lr=3e-4):
        super().__init__()
        self.lr = lr
        self.net = nn.Sequential(
            nn.Linear(in_dim, hidden),
            nn.ReLU(),
            nn.Dropout(0.2),
            nn.Linear(hidden, classes),
        )

    def forward(self, x):
        assert torch.isfinite(x).all(), "non-finite input batch"  # expect: XLA502
        return self.net(x.flatten(1))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self(x), y)
        if batch_idx % 50 == 0:
            print(f"batch {batch_idx}: loss {loss:.4f}")  # expect: XLA507
        return loss

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.lr, weight_decay=1e-2)


class MNISTDataModule:
    def __init__(self, path, batch_size=128, num_workers=4):
        self.path = path
        self.batch_size = batch_size
        self.num_workers = num_workers
        self.train_set = None

    def setup(self):
        images, labels = torch.load(self.path)
        self.train_set = TensorDataset(images.float().div(255.0), labels)

    def train_dataloader(self, num_replicas, rank):
        sampler = DistributedSampler(self.train_set, num_replicas=num_replicas, rank=rank, shuffle=True)
        return DataLoader(self.train_set, batch_size=self.batch_size, sampler=sampler, num_workers=self.num_workers)  # expect: XLA304
