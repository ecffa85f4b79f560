"""Model zoo: torchvision backbones plus a small CNN for smoke tests."""
import torch
import torch.nn as nn
import torchvision


class SmallCNN(nn.Module):
    def __init__(self, num_classes=1000, width=64, drop_path=0.0):
        super().__init__()
        self.drop_path = drop_path
        self.features = nn.Sequential(
            nn.Conv2d(3, width, 3, stride=2, padding=1), nn.BatchNorm2d(width), nn.ReLU(inplace=True),
            nn.Conv2d(width, 2 * width, 3, stride=2, padding=1), nn.BatchNorm2d(2 * width), nn.ReLU(inplace=True),
            nn.AdaptiveAvgPool2d(1),
        )
        self.head = nn.Linear(2 * width, num_classes)

    def forward(self, x):
        if x.shape[-1] > 256:
            x = nn.functional.interpolate(x, size=(256, 256), mode="bilinear", align_corners=False)
        feats = torch.flatten(self.features(x), 1)
        if self.training and self.drop_path > 0:
            feats = nn.functional.dropout(feats, p=self.drop_path)
        return self.head(feats)


MODELS = {
    "convnext_tiny": torchvision.models.convnext_tiny,
    "resnet50": torchvision.models.resnet50,
    "small_cnn": SmallCNN,
}


def build_model(name, num_classes):
    return MODELS[name](num_classes=num_classes)
