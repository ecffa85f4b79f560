# Bug report: FSDPv2 pretraining, async checkpoints occasionally contain a mix of old and
# new weights. torch.distributed.checkpoint.async_save is issued inside the step loop
# after optimizer.step() and before the step's torch_xla.sync().
import numpy as np
import torch
import torch.distributed
import torch.distributed.checkpoint
import torch.nn as nn
import torch_xla
import torch_xla.distributed.spmd as xs
import torch_xla.runtime as xr
from torch_xla.experimental.distributed_checkpoint import SPMDSavePlanner
from torch_xla.experimental.spmd_fully_sharded_data_parallel import SpmdFullyShardedDataParallel as FSDPv2


class Decoder(nn.Module):
    def __init__(self, vocab=32000, dim=1024, layers=4):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList(nn.TransformerEncoderLayer(dim, 16, batch_first=True) for _ in range(layers))
        self.out = nn.Linear(dim, vocab, bias=False)

    def forward(self, ids):
        h = self.embed(ids)
        for layer in self.layers:
            h = layer(h)
        return self.out(h)


def pretrain(total_steps=10000, ckpt_every=1000, path="gs://my-bucket/run1"):
    xr.use_spmd()
    torch.distributed.init_process_group("gloo", init_method="xla://")
    n = xr.global_runtime_device_count()
    mesh = xs.Mesh(np.arange(n), (n, 1), ("fsdp", "tensor"))
    device = torch_xla.device()
    model = FSDPv2(Decoder().to(device), mesh=mesh)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1)
    pending = None
    for step in range(total_steps):
        ids = torch.randint(0, 32000, (16, 513), device=device)
        xs.mark_sharding(ids, mesh, ("fsdp", None))
        optimizer.zero_grad()
        logits = model(ids[:, :-1])
        loss = nn.functional.cross_entropy(logits.flatten(0, 1), ids[:, 1:].flatten())
        loss.backward()
        optimizer.step()
        if step % ckpt_every == 0:
            if pending is not None:
                pending.result()
            pending = torch.distributed.checkpoint.async_save(  # expect: XLA605
                {"model": model.state_dict()},
                storage_writer=torch.distributed.checkpoint.FileSystemWriter(f"{path}/{step}"),
                planner=SPMDSavePlanner(),
            )
        torch_xla.sync()


if __name__ == "__main__":
    pretrain()
