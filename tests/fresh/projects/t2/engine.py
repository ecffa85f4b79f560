"""The training loop, the same for every backend."""
from dataclasses import asdict

import torch
import torch.nn.functional as F
import wandb
from torch.utils.data import DataLoader

from components import ResMLP, SyntheticImages


def train_worker(index, backend, cfg):
    torch.manual_seed(cfg.seed)  # expect: XLA206
    if backend.is_main():  # expect: XLA604
        wandb.init(project=cfg.project, config=asdict(cfg))
    device = backend.device()
    model = backend.wrap_model(ResMLP(cfg.in_dim, cfg.hidden, cfg.classes))
    optimizer = torch.optim.SGD(model.parameters(), lr=cfg.lr, momentum=0.9, weight_decay=5e-4)
    dataset = SyntheticImages(cfg.num_samples, cfg.in_dim, cfg.classes)
    loader = DataLoader(dataset, batch_size=cfg.batch_size, sampler=backend.sampler(dataset), drop_last=True, num_workers=4)  # expect: XLA303
    loader = backend.wrap_loader(loader)
    history = []
    for epoch in range(cfg.epochs):
        model.train()
        total = torch.zeros((), device=device)
        steps = 0
        for step, (x, y) in enumerate(loader):
            optimizer.zero_grad(set_to_none=True)
            with backend.autocast():
                loss = F.cross_entropy(model(x), y)
            backend.backward(loss)
            backend.step(optimizer)
            total += loss.detach()
            steps += 1
            history.append(loss.detach().cpu())  # expect: XLA501
            if step % cfg.log_every == 0:
                print(f"[{index}] epoch {epoch} step {step} loss {loss.item():.4f}")  # expect: XLA507
        mean_loss = (total / max(steps, 1)).item()
        if wandb.run is not None:
            wandb.log({"epoch": epoch, "train_loss": mean_loss})
        backend.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch}, f"{cfg.out_dir}/last.pt")
    return history
