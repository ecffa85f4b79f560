"""Image folders, resized and center-cropped to the training resolution."""
import torchvision.datasets as dsets
import torchvision.transforms as T
from torch.utils.data import DataLoader


def image_transform(size):
    return T.Compose([T.Resize(size), T.CenterCrop(size), T.ToTensor(), T.Normalize((0.5,) * 3, (0.5,) * 3)])


def build_train_loader(root, size, batch_size, workers=4):
    dataset = dsets.ImageFolder(root, transform=image_transform(size))
    return DataLoader(  # expect: XLA303
        dataset, batch_size=batch_size, shuffle=True, drop_last=True, num_workers=workers, persistent_workers=True
    )


def build_preview_loader(root, size, n=64):
    """A fixed batch of real images, for the sample grids."""
    dataset = dsets.ImageFolder(root, transform=image_transform(size))
    return DataLoader(dataset, batch_size=n, shuffle=False)
