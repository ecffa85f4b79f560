import os

import torch
from torch.utils.data import DataLoader, Dataset


class NpzImages(Dataset):
    def __init__(self, path, train=True):
        blob = torch.load(path)
        self.images = blob["images"]
        self.labels = blob["labels"]
        self.train = train

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        img = self.images[i].float().div(255.0)
        if self.train and torch.rand(()) < 0.5:
            img = img.flip(-1)
        return img, int(self.labels[i])


def build_datasets(data_dir):
    train = NpzImages(os.path.join(data_dir, "train.pt"), train=True)
    val = NpzImages(os.path.join(data_dir, "test.pt"), train=False)
    return train, val


def build_loader(dataset, batch_size, sampler=None, shuffle=True):
    return DataLoader(  # expect: XLA304
        dataset,
        batch_size=batch_size,
        sampler=sampler,
        shuffle=shuffle and sampler is None,
        num_workers=4,
    )
