# options: --unsafe-fixes
# remains: XLA405 XLA405
# XLA405's fix moves the optimizer after the module's move only when its constructor reads
# the parameters itself: a list collected before (a comprehension, groups built in a loop)
# holds the old CPU parameters wherever the optimizer is built (a human moves the module up).
import torch
import torch_xla
from torch import nn


def make_model():
    return nn.Sequential(nn.Linear(4, 4), nn.ReLU())


def factory():
    model = make_model()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    model.to(torch_xla.device())
    return opt


def collected():
    model = make_model()
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.SGD(params, lr=0.1)
    model.to(torch_xla.device())
    return opt


def groups_loop():
    model = nn.Linear(4, 4)
    groups = []
    for n, p in model.named_parameters():
        groups.append({"params": [p], "weight_decay": 0.0 if "bias" in n else 0.01})
    opt = torch.optim.AdamW(groups, lr=0.1)
    model.to(torch_xla.device())
    return opt
