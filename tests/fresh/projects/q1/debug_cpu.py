"""Overfit a few random batches on the laptop before spending TPU time (no torch_xla here)."""
import torch
from torch.utils.data import DataLoader, TensorDataset

from classifier import ImageClassifier
from minilit import CPUStrategy, Trainer, seed_everything


class RandomDataModule:
    def setup(self):
        self.ds = TensorDataset(torch.randn(64, 3, 32, 32), torch.randint(0, 10, (64,)))

    def train_dataloader(self):
        return DataLoader(self.ds, batch_size=16, shuffle=True)

    def val_dataloader(self):
        return DataLoader(self.ds, batch_size=64)


if __name__ == "__main__":
    seed_everything(0)
    model = ImageClassifier(lr=0.05)
    dm = RandomDataModule()
    history = Trainer(CPUStrategy(), max_epochs=20, log_every_n_steps=1).fit(model, dm)
    print("val loss per epoch:", [round(v, 4) for v in history])
    x, y = next(iter(dm.train_dataloader()))
    model.eval()
    with torch.no_grad():
        print("train acc after overfitting:", (model(x).argmax(1) == y).float().mean().item())
