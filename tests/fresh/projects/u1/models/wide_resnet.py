"""Wide-ResNet (Zagoruyko & Komodakis), pre-activation blocks with dropout between the convs."""
import torch.nn as nn
import torch.nn.functional as F


class WideBlock(nn.Module):
    def __init__(self, in_planes, planes, stride):
        super().__init__()
        self.bn1 = nn.BatchNorm2d(in_planes)
        self.conv1 = nn.Conv2d(in_planes, planes, 3, padding=1, bias=False)
        self.drop = nn.Dropout(p=0.3)
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, stride=stride, padding=1, bias=False)
        self.shortcut = nn.Sequential()
        if stride != 1 or in_planes != planes:
            self.shortcut = nn.Conv2d(in_planes, planes, 1, stride=stride, bias=False)

    def forward(self, x):
        out = self.conv1(F.relu(self.bn1(x)))
        out = self.conv2(F.relu(self.bn2(self.drop(out))))
        return out + self.shortcut(x)


class WideResNet(nn.Module):
    def __init__(self, depth=16, width=4, num_classes=10):
        super().__init__()
        assert (depth - 4) % 6 == 0, "depth must be 6n+4"
        n = (depth - 4) // 6
        widths = [16, 16 * width, 32 * width, 64 * width]
        self.stem = nn.Conv2d(3, widths[0], 3, padding=1, bias=False)
        layers, in_planes = [], widths[0]
        for i, planes in enumerate(widths[1:]):
            for j in range(n):
                layers.append(WideBlock(in_planes, planes, stride=2 if (i > 0 and j == 0) else 1))
                in_planes = planes
        self.blocks = nn.Sequential(*layers)
        self.bn = nn.BatchNorm2d(in_planes)
        self.fc = nn.Linear(in_planes, num_classes)

    def forward(self, x):
        out = F.relu(self.bn(self.blocks(self.stem(x))))
        out = F.adaptive_avg_pool2d(out, 1).flatten(1)
        return self.fc(out)
