"""Small random stand-ins for the model, optimizer and data a lint case passes as ``None``.

Used by the ports runtime set (tests/runtime/test_ports.py) in the expressions of its plans;
everything is tiny (64 samples, batches of 8) so a case trains in a few steps.
"""
import torch
import torch_xla
from torch.utils.data import DataLoader, TensorDataset

N = 64
BATCH = 8


def tensors(features):
    """A dataset of ``N`` rows of ``features`` floats, each item one tensor."""
    return torch.randn(N, features)


def pairs(features, outputs=None, classes=None):
    """A TensorDataset of (x, y): y holds ``outputs`` floats, or a class index below ``classes``."""
    x = torch.randn(N, features)
    y = torch.randint(0, classes, (N,)) if classes else torch.randn(N, outputs)
    return TensorDataset(x, y)


def poisoned(dataset):
    """``dataset`` (a TensorDataset of (x, y)) with NaN inputs: every loss computed on it is NaN."""
    x, y = dataset.tensors
    return TensorDataset(torch.full_like(x, float("nan")), y)


def loader(dataset):
    """A host DataLoader over ``dataset`` (batches of ``BATCH``, the last one dropped)."""
    return DataLoader(dataset, batch_size=BATCH, drop_last=True)


def device_batches(features, steps=4):
    """A list of ``steps`` batches already on the XLA device (what a device loader yields)."""
    return [torch.randn(BATCH, features, device=torch_xla.device()) for _ in range(steps)]


def model(features, outputs, on_device=True):
    """A Linear model, on the XLA device unless ``on_device`` is false."""
    net = torch.nn.Linear(features, outputs)
    return net.to(torch_xla.device()) if on_device else net


def model_opt(features, outputs, on_device=True, lr=0.1):
    """(model, SGD optimizer over its parameters), the model on the device unless told."""
    net = model(features, outputs, on_device)
    return net, torch.optim.SGD(net.parameters(), lr=lr)
