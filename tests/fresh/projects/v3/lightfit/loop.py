import os

import torch
import torch.nn as nn
from torch.utils.data import DataLoader

from .data import RegressionDataset
from .strategies import get_strategy


def build_model(dim):
    return nn.Sequential(nn.Linear(dim, 256), nn.GELU(), nn.Linear(256, 1))


def run(strategy, cfg):
    torch.manual_seed(cfg["seed"])
    model = build_model(cfg["dim"])
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg["lr"])  # expect: XLA405
    model = strategy.setup_model(model)

    dataset = RegressionDataset(dim=cfg["dim"])
    loader = DataLoader(dataset, batch_size=cfg["batch_size"], shuffle=True, drop_last=True)  # expect: XLA303
    loss_fn = nn.MSELoss()

    for epoch in range(cfg["epochs"]):
        total = 0.0
        for x, y in strategy.wrap_loader(loader):
            optimizer.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), cfg["max_norm"])  # expect: XLA203
            strategy.optimizer_step(optimizer)
            total += loss.item()  # expect: XLA501
        if strategy.is_global_zero():
            print(f"epoch {epoch}: mean loss {total / len(loader):.5f}")
        state = {"model": model.state_dict(), "epoch": epoch}
        strategy.save_checkpoint(state, os.path.join(cfg["out"], "last.pt"))
    if strategy.is_global_zero():
        strategy.save_checkpoint({"model": model.state_dict()}, os.path.join(cfg["out"], "final.pt"))  # expect: XLA602
    strategy.teardown()


def _xla_worker(index, cfg):
    run(get_strategy("xla"), cfg)


def fit(cfg):
    if cfg["strategy"] == "xla":
        import torch_xla

        torch_xla.launch(_xla_worker, args=(cfg,))
    else:
        run(get_strategy(cfg["strategy"]), cfg)
