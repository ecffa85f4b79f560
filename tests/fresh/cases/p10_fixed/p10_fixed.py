# Fixed: torch_xla.sync() once per validation batch before reading the running loss.
import torch
import torch.nn as nn
import torch_xla
from torch.utils.data import DataLoader, TensorDataset


@torch.no_grad()
def validate(model, loader, device):
    model.eval()
    criterion = nn.CrossEntropyLoss()
    total = torch.zeros((), device=device)
    for i, (x, y) in enumerate(loader):
        x, y = x.to(device), y.to(device)
        total += criterion(model(x), y)
        torch_xla.sync()
        print(f"[val] batch {i} running loss {(total / (i + 1)).item():.4f}")
    return total / len(loader)


@torch.no_grad()
def accuracy(model, loader, device):
    correct, seen = 0, 0
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        correct += (model(x).argmax(-1) == y).sum().item()
        seen += y.shape[0]
    return correct / max(seen, 1)


def main():
    device = torch_xla.device()
    model = nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10)).to(device)
    images, labels = torch.randn(5000, 1, 28, 28), torch.randint(0, 10, (5000,))
    loader = DataLoader(TensorDataset(images, labels), batch_size=250, drop_last=True)
    val_loss = validate(model, loader, device)
    print("val loss", val_loss.item(), "acc", accuracy(model, loader, device))


if __name__ == "__main__":
    main()
