import torch
import torch_xla
import torch_xla.runtime as xr

from llama_spmd.config import TrainConfig
from llama_spmd.data import make_loader
from llama_spmd.model import Llama
from llama_spmd.sharding import build_mesh, shard_params
from llama_spmd.step import train_step


def main():
    cfg = TrainConfig()
    device = torch_xla.device()
    xr.use_spmd()  # expect: XLA906
    mesh = build_mesh(cfg)
    model = Llama(cfg)
    shard_params(model, mesh)
    model = model.to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=0.1)
    loader = make_loader(cfg)
    for step, batch in enumerate(loader):
        loss = train_step(model, optimizer, batch, mesh, device)
        torch_xla.sync()
        if step % cfg.log_every == 0:
            print(f"step {step} loss {loss.item():.3f}")  # expect: XLA507
        if step + 1 == cfg.steps:
            break
    cpu_state = {k: v.cpu() for k, v in model.state_dict().items()}
    torch.save(cpu_state, cfg.out)


if __name__ == "__main__":
    main()
