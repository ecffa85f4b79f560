import torch.nn as nn


def block(c_in, c_out, stride=1):
    return nn.Sequential(
        nn.Conv2d(c_in, c_out, 3, stride=stride, padding=1, bias=False),
        nn.BatchNorm2d(c_out),
        nn.ReLU(inplace=True),
    )


class SmallResNet(nn.Module):
    def __init__(self, num_classes=100, width=64):
        super().__init__()
        self.stem = block(3, width)
        self.stage1 = nn.Sequential(block(width, width), block(width, width))
        self.stage2 = nn.Sequential(block(width, 2 * width, stride=2), block(2 * width, 2 * width))
        self.stage3 = nn.Sequential(block(2 * width, 4 * width, stride=2), block(4 * width, 4 * width))
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(4 * width, num_classes)

    def forward(self, x):
        x = self.stage3(self.stage2(self.stage1(self.stem(x))))
        return self.fc(self.pool(x).flatten(1))
