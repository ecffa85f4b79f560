"""Linear-probe training on frozen features. Edit conf.BACKEND to switch hardware."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader

import runners  # noqa: F401  (registers "cpu" and "tpu")
from common import Meter, seed_all
from conf import BACKEND, TrainConfig
from data import ShardedFeatureDataset
from registry import build


class ProbeHead(nn.Module):
    def __init__(self, in_dim, hidden, num_classes, dropout):
        super().__init__()
        self.net = nn.Sequential(
            nn.LayerNorm(in_dim),
            nn.Dropout(dropout),
            nn.Linear(in_dim, hidden),
            nn.GELU(),
            nn.Dropout(dropout),
            nn.Linear(hidden, num_classes),
        )

    def forward(self, x):
        return self.net(x)


def train_worker(index, runner):
    cfg = runner.cfg
    runner.setup(index)
    seed_all(cfg.seed)
    dataset = ShardedFeatureDataset(cfg.data_dir, split="train")
    loader = DataLoader(dataset, batch_size=cfg.batch_size, shuffle=True, drop_last=True, num_workers=4)
    model = ProbeHead(cfg.in_dim, cfg.hidden, cfg.num_classes, cfg.dropout).to(runner.device)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    meter = Meter()
    for epoch in range(cfg.epochs):
        model.train()
        for x, y in loader:
            x, y = x.to(runner.device), y.to(runner.device)
            optimizer.zero_grad()
            logits = model(x)
            loss = F.cross_entropy(logits, y)
            loss.backward()
            runner.optimizer_step(optimizer)
            meter.update(loss, logits, y)
        if runner.is_master():
            print(f"epoch {epoch}: {meter.summary()}")
        meter.reset()
    runner.save(model)


if __name__ == "__main__":
    cfg = TrainConfig()
    if BACKEND == "cuda":
        import gpu_runner  # noqa: F401
    runner = build(BACKEND, cfg)  # expect: XLA003
    runner.launch(train_worker)
