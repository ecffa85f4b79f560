"""Small CNN for the 104-class flowers competition."""
import torch.nn as nn


def conv_bn(in_ch, out_ch):
    return nn.Sequential(nn.Conv2d(in_ch, out_ch, 3, padding=1, bias=False), nn.BatchNorm2d(out_ch), nn.ReLU(inplace=True))


class FlowerNet(nn.Module):
    def __init__(self, num_classes=104):
        super().__init__()
        self.features = nn.Sequential(
            conv_bn(3, 32), nn.MaxPool2d(2),
            conv_bn(32, 64), nn.MaxPool2d(2),
            conv_bn(64, 128), nn.MaxPool2d(2),
            conv_bn(128, 256), nn.AdaptiveAvgPool2d(1),
        )
        self.classifier = nn.Sequential(nn.Flatten(), nn.Dropout(0.3), nn.Linear(256, num_classes))

    def forward(self, x):
        return self.classifier(self.features(x))
