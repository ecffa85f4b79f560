import torch
import torch.nn as nn


class ConvBlock(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(cout)
        self.act = nn.ReLU(inplace=True)

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class SmallConvNet(nn.Module):
    def __init__(self, num_classes=10, width=64, drop=0.2, clamp_logits=30.0):
        super().__init__()
        self.features = nn.Sequential(
            ConvBlock(3, width),
            ConvBlock(width, width * 2),
            nn.MaxPool2d(2),
            ConvBlock(width * 2, width * 4),
            nn.AdaptiveAvgPool2d(1),
        )
        self.dropout = nn.Dropout(drop)
        self.head = nn.Linear(width * 4, num_classes)
        self.clamp_logits = clamp_logits

    def forward(self, x):
        feats = self.features(x).flatten(1)
        logits = self.head(self.dropout(feats))
        if self.clamp_logits is not None:
            logits = logits.clamp(-self.clamp_logits, self.clamp_logits)
        if logits.abs().max() > 1e4:  # expect: XLA502
            logits = logits / 100.0
        return logits
