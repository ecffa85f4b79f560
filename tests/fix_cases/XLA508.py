import torch
import torch_xla
from torch.utils.data import DataLoader


def evaluate(model, dataset):
    device = torch_xla.device()
    model.to(device).eval()
    correct = 0
    with torch.no_grad():
        for x, y in DataLoader(dataset, batch_size=8):
            out = model(x.to(device))
            correct += (out.argmax(-1) == y.to(device)).sum()
            if len(y) < 8:
                print(f"last batch: {correct.item()}")
    return correct
