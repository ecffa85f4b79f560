"""Feature rows stored as one tensor file per split, and the loader factory both entry points use."""
import torch
from torch.utils.data import DataLoader, Dataset


class FeatureRows(Dataset):
    def __init__(self, path, limit=0):
        blob = torch.load(path, map_location="cpu")
        self.x = blob["features"].float()
        self.y = blob["targets"].float().view(len(self.x), -1)
        if limit:
            self.x, self.y = self.x[:limit], self.y[:limit]

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


def make_loader(dataset, batch_size, sampler=None, shuffle=False, workers=4):
    return DataLoader(  # expect: XLA304
        dataset,
        batch_size=batch_size,
        sampler=sampler,
        shuffle=shuffle if sampler is None else False,
        num_workers=workers,
    )
