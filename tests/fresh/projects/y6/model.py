"""Conv trunk with a top-1 mixture-of-experts block before the classifier."""
import torch
import torch.nn as nn


class Top1MoE(nn.Module):
    def __init__(self, dim, num_experts):
        super().__init__()
        self.router = nn.Linear(dim, num_experts)
        self.experts = nn.ModuleList(nn.Linear(dim, dim) for _ in range(num_experts))

    def forward(self, x):
        choice = self.router(x).argmax(-1)
        out = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            idx = torch.nonzero(choice == e, as_tuple=True)[0]  # expect: XLA503
            out = out.index_add(0, idx, expert(x.index_select(0, idx)))
        return out


class ConvNet(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 64, 3, 2, 1), nn.BatchNorm2d(64), nn.ReLU(),
            nn.Conv2d(64, 128, 3, 2, 1), nn.BatchNorm2d(128), nn.ReLU(),
            nn.Conv2d(128, 256, 3, 2, 1), nn.BatchNorm2d(256), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(),
        )
        self.moe = Top1MoE(256, cfg.num_experts)
        self.drop = nn.Dropout(cfg.dropout)
        self.fc = nn.Linear(256, cfg.num_classes)

    def forward(self, x):
        h = self.features(x)
        h = h + self.moe(h)
        return self.fc(self.drop(h))
