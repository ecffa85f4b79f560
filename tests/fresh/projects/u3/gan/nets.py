"""DCGAN generator and discriminator for 64x64 images."""
import torch.nn as nn


class Generator(nn.Module):
    def __init__(self, z_dim=128, width=64):
        super().__init__()
        w = width
        self.net = nn.Sequential(
            nn.ConvTranspose2d(z_dim, 8 * w, 4, 1, 0, bias=False), nn.BatchNorm2d(8 * w), nn.ReLU(True),
            nn.ConvTranspose2d(8 * w, 4 * w, 4, 2, 1, bias=False), nn.BatchNorm2d(4 * w), nn.ReLU(True),
            nn.ConvTranspose2d(4 * w, 2 * w, 4, 2, 1, bias=False), nn.BatchNorm2d(2 * w), nn.ReLU(True),
            nn.ConvTranspose2d(2 * w, w, 4, 2, 1, bias=False), nn.BatchNorm2d(w), nn.ReLU(True),
            nn.ConvTranspose2d(w, 3, 4, 2, 1, bias=False), nn.Tanh(),
        )

    def forward(self, z):
        return self.net(z.view(z.size(0), -1, 1, 1))


class Discriminator(nn.Module):
    def __init__(self, width=64):
        super().__init__()
        w = width
        self.features = nn.Sequential(
            nn.Conv2d(3, w, 4, 2, 1), nn.LeakyReLU(0.2, True),
            nn.Conv2d(w, 2 * w, 4, 2, 1), nn.LeakyReLU(0.2, True),
            nn.Conv2d(2 * w, 4 * w, 4, 2, 1), nn.LeakyReLU(0.2, True),
            nn.Conv2d(4 * w, 8 * w, 4, 2, 1), nn.LeakyReLU(0.2, True),
        )
        self.drop = nn.Dropout(0.3)
        self.head = nn.Linear(8 * w * 4 * 4, 1)

    def forward(self, x):
        return self.head(self.drop(self.features(x).flatten(1))).squeeze(1)
