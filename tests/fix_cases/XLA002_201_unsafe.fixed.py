# options: --unsafe-fixes --xla-scope=always
import torch
import torch_xla
import torch_xla.core.xla_model as xm


def train(rank, loader, model, optimizer):
    for x in loader:
        model(x.to(torch_xla.device())).sum().backward()
        xm.optimizer_step(optimizer)


if __name__ == "__main__":
    torch_xla.launch(train, args=(None, None, None))
