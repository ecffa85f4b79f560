"""The training loop shared by every device environment."""
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


class SyntheticImages(Dataset):
    """Deterministic fake ImageNet: sample i is generated from seed i on the CPU."""

    def __init__(self, num_samples, image_size, num_classes):
        self.num_samples = num_samples
        self.image_size = image_size
        self.num_classes = num_classes

    def __len__(self):
        return self.num_samples

    def __getitem__(self, idx):
        g = torch.Generator().manual_seed(idx)
        image = torch.randn(3, self.image_size, self.image_size, generator=g)
        label = torch.randint(0, self.num_classes, (), generator=g)
        return image, label


class SmallResNet(nn.Module):
    def __init__(self, num_classes, width=64):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, width, 3, 2, 1, bias=False), nn.BatchNorm2d(width), nn.ReLU())
        self.blocks = nn.Sequential(*[self._block(width * 2**i, width * 2 ** (i + 1)) for i in range(3)])
        self.fc = nn.Linear(width * 8, num_classes)

    @staticmethod
    def _block(cin, cout):
        return nn.Sequential(nn.Conv2d(cin, cout, 3, 2, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU())

    def forward(self, x):
        x = self.blocks(self.stem(x))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def train(env, cfg):
    model = env.wrap_model(SmallResNet(cfg.num_classes))
    if cfg.compile:
        model = env.compile(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=cfg.lr * env.world_size, momentum=0.9, weight_decay=1e-4)
    dataset = SyntheticImages(cfg.num_samples, cfg.image_size, cfg.num_classes)
    sampler = env.make_sampler(dataset)
    loader = DataLoader(dataset, batch_size=cfg.batch_size, sampler=sampler, drop_last=True,
                        num_workers=cfg.workers, persistent_workers=cfg.workers > 0)
    for epoch in range(cfg.epochs):
        sampler.set_epoch(epoch)
        model.train()
        for step, (images, labels) in enumerate(loader):
            images, labels = images.to(env.local_rank), labels.to(env.local_rank)  # expect: XLA402
            with env.autocast():
                loss = F.cross_entropy(model(images), labels, label_smoothing=0.1)
            optimizer.zero_grad(set_to_none=True)
            env.backward(loss)
            env.step(optimizer)
            env.mark_step()
            if step % cfg.log_every == 0:
                print(f"[rank {env.rank}] epoch {epoch} step {step} loss {loss:.4f}")  # expect: XLA507
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
        if env.is_primary():
            env.save(model.state_dict(), os.path.join(cfg.out_dir, f"epoch{epoch}.pt"))  # expect: XLA602
    env.shutdown()
