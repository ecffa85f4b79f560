# Fixed: FSDPv2 is told how to shard the dict output (shard_output=).
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch_xla
import torch_xla.distributed.parallel_loader as pl
import torch_xla.distributed.spmd as xs
import torch_xla.runtime as xr
from torch.utils.data import DataLoader, TensorDataset
from torch_xla.experimental.spmd_fully_sharded_data_parallel import SpmdFullyShardedDataParallel as FSDPv2

xr.use_spmd()


class TinyLM(nn.Module):
    def __init__(self, vocab=8192, dim=512):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.block = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
        self.lm_head = nn.Linear(dim, vocab)

    def forward(self, input_ids):
        h = self.embed(input_ids)
        h = h + self.block(h)
        return {"logits": self.lm_head(h), "hidden_states": h}


def shard_output(output, mesh):
    xs.mark_sharding(output["logits"], mesh, ("fsdp", None, None))


def main():
    n = xr.global_runtime_device_count()
    mesh = xs.Mesh(np.arange(n), (n, 1), ("fsdp", "model"))
    device = torch_xla.device()
    model = FSDPv2(TinyLM().to(device), mesh=mesh, shard_output=shard_output)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)

    tokens = torch.randint(0, 8192, (2048, 129))
    ds = TensorDataset(tokens[:, :-1], tokens[:, 1:])
    loader = DataLoader(ds, batch_size=32, shuffle=True, drop_last=True)
    train_loader = pl.MpDeviceLoader(loader, device, input_sharding=xs.ShardingSpec(mesh, ("fsdp", None)))

    for epoch in range(3):
        for input_ids, labels in train_loader:
            optimizer.zero_grad()
            out = model(input_ids)
            loss = F.cross_entropy(out["logits"].flatten(0, 1), labels.flatten())
            loss.backward()
            optimizer.step()
        print(f"epoch {epoch} done")


if __name__ == "__main__":
    main()
