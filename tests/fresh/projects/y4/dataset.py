"""Flowers dataset (image files + a labels CSV) and its transforms."""
import csv
import os
import tarfile
import urllib.request

from PIL import Image
from torch.utils.data import Dataset
from torchvision import transforms

DATA_URL = "https://storage.googleapis.com/example-bucket/flowers-104.tar"


def download_dataset(root):
    if os.path.isdir(os.path.join(root, "train")):
        return
    os.makedirs(root, exist_ok=True)
    archive = os.path.join(root, "flowers.tar")
    urllib.request.urlretrieve(DATA_URL, archive)
    with tarfile.open(archive) as tar:
        tar.extractall(root)


def get_transforms(train):
    norm = transforms.Normalize((0.485, 0.456, 0.406), (0.229, 0.224, 0.225))
    if train:
        return transforms.Compose([transforms.RandomResizedCrop(224), transforms.RandomHorizontalFlip(),
                                   transforms.ToTensor(), norm])
    return transforms.Compose([transforms.Resize(256), transforms.CenterCrop(224), transforms.ToTensor(), norm])


class FlowerDataset(Dataset):
    def __init__(self, root, split, transform):
        self.folder = os.path.join(root, split)
        with open(os.path.join(root, f"{split}.csv")) as f:
            self.rows = [(r["file"], int(r["label"])) for r in csv.DictReader(f)]
        self.transform = transform

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, index):
        name, label = self.rows[index]
        image = Image.open(os.path.join(self.folder, name)).convert("RGB")
        return self.transform(image), label
