"""A ResNet-9 for 32x32 images."""
import torch.nn as nn


def conv_bn(c_in, c_out, pool=False):
    layers = [nn.Conv2d(c_in, c_out, 3, padding=1, bias=False), nn.BatchNorm2d(c_out), nn.ReLU(inplace=True)]
    if pool:
        layers.append(nn.MaxPool2d(2))
    return nn.Sequential(*layers)


class Residual(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.body = nn.Sequential(conv_bn(channels, channels), conv_bn(channels, channels))

    def forward(self, x):
        return x + self.body(x)


def build_model(num_classes=10):
    return nn.Sequential(
        conv_bn(3, 64),
        conv_bn(64, 128, pool=True),
        Residual(128),
        conv_bn(128, 256, pool=True),
        conv_bn(256, 512, pool=True),
        Residual(512),
        nn.AdaptiveMaxPool2d(1),
        nn.Flatten(),
        nn.Linear(512, num_classes),
    )
