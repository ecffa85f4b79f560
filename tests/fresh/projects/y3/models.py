"""A small ResNet-ish classifier and a timm-like create_model()."""
import torch.nn as nn
import torch.nn.functional as F


class BasicBlock(nn.Module):
    def __init__(self, in_ch, out_ch, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(in_ch, out_ch, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(out_ch)
        self.conv2 = nn.Conv2d(out_ch, out_ch, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_ch)
        self.shortcut = nn.Identity()
        if stride != 1 or in_ch != out_ch:
            self.shortcut = nn.Sequential(nn.Conv2d(in_ch, out_ch, 1, stride, bias=False), nn.BatchNorm2d(out_ch))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.shortcut(x))


class SmallResNet(nn.Module):
    def __init__(self, widths=(64, 128, 256), num_classes=1000, drop_rate=0.0):
        super().__init__()
        self.drop_rate = drop_rate
        self.stem = nn.Sequential(nn.Conv2d(3, widths[0], 3, 1, 1, bias=False), nn.BatchNorm2d(widths[0]), nn.ReLU())
        blocks, in_ch = [], widths[0]
        for i, w in enumerate(widths):
            blocks.append(BasicBlock(in_ch, w, stride=1 if i == 0 else 2))
            in_ch = w
        self.blocks = nn.Sequential(*blocks)
        self.drop = nn.Dropout(drop_rate)
        self.fc = nn.Linear(in_ch, num_classes)

    def forward(self, x):
        x = self.blocks(self.stem(x))
        x = x.mean((2, 3))
        if self.drop_rate > 0.0:
            x = self.drop(x)
        return self.fc(x)


_MODELS = {
    "resnet_s": dict(widths=(64, 128, 256)),
    "resnet_m": dict(widths=(96, 192, 384)),
}


def create_model(name, num_classes=1000, drop_rate=0.0):
    return SmallResNet(num_classes=num_classes, drop_rate=drop_rate, **_MODELS[name])
