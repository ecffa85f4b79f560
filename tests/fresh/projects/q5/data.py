"""ImageNet folders and loaders (the same for every backend)."""
from torch.utils.data import DataLoader
from torchvision import datasets, transforms

NORMALIZE = transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])


def imagenet_datasets(root):
    train = datasets.ImageFolder(
        f"{root}/train",
        transforms.Compose([
            transforms.RandomResizedCrop(224), transforms.RandomHorizontalFlip(), transforms.ToTensor(), NORMALIZE,
        ]),
    )
    val = datasets.ImageFolder(
        f"{root}/val",
        transforms.Compose([transforms.Resize(256), transforms.CenterCrop(224), transforms.ToTensor(), NORMALIZE]),
    )
    return train, val


def build_loader(dataset, batch_size, sampler=None, workers=8, train=True):
    return DataLoader(
        dataset,
        batch_size=batch_size,
        shuffle=(train and sampler is None),
        sampler=sampler,
        num_workers=workers,
        pin_memory=True,
        drop_last=train,
    )
