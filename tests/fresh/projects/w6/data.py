import os

import torchvision
import torchvision.transforms as T

MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


def build_model(num_classes):
    return torchvision.models.resnet50(num_classes=num_classes)


def eval_transform():
    return T.Compose([T.Resize(256), T.CenterCrop(224), T.ToTensor(), T.Normalize(MEAN, STD)])


def build_datasets(root):
    train_tf = T.Compose([T.RandomResizedCrop(224), T.RandomHorizontalFlip(), T.ToTensor(), T.Normalize(MEAN, STD)])
    train = torchvision.datasets.ImageFolder(os.path.join(root, "train"), transform=train_tf)
    val = torchvision.datasets.ImageFolder(os.path.join(root, "val"), transform=eval_transform())
    return train, val
