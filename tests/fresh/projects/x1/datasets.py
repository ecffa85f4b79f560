import os

from torchvision import datasets, transforms


def build_transform(is_train):
    if is_train:
        return transforms.Compose(
            [transforms.RandomResizedCrop(224), transforms.RandomHorizontalFlip(), transforms.ToTensor()]
        )
    return transforms.Compose([transforms.Resize(256), transforms.CenterCrop(224), transforms.ToTensor()])


def build_dataset(is_train, args):
    root = os.path.join(args.data_path, "train" if is_train else "val")
    return datasets.ImageFolder(root, transform=build_transform(is_train))
