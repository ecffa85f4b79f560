# FSDPv2 (SPMD) fine-tune with a HF-style dict output and a distributed checkpoint group.
import os

os.environ["XLA_USE_SPMD"] = "1"  # expect: XLA811

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch_xla
import torch_xla.distributed.spmd as xs
import torch_xla.runtime as xr
from torch_xla.experimental.distributed_checkpoint import CheckpointManager
from torch_xla.experimental.spmd_fully_sharded_data_parallel import SpmdFullyShardedDataParallel as FSDPv2


class Seq2SeqLite(nn.Module):
    def __init__(self, vocab=16000, dim=512):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.enc = nn.Linear(dim, dim)
        self.dec = nn.Linear(dim, vocab)

    def forward(self, input_ids, labels):
        logits = self.dec(torch.tanh(self.enc(self.embed(input_ids))))
        loss = nn.functional.cross_entropy(logits.flatten(0, 1), labels.flatten())
        return {"loss": loss, "logits": logits}


class Encoder(nn.Module):
    def __init__(self, dim=512):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, h):
        return torch.tanh(self.proj(h)), h.shape[-1]


def main(steps=1000):
    device = torch_xla.device()
    warmup = torch.zeros(512, device=device)
    xr.use_spmd()  # expect: XLA906
    dist.init_process_group("gloo", init_method="xla://")
    n = xr.global_runtime_device_count()
    mesh = xs.Mesh(np.arange(n), (n, 1), ("fsdp", "model"))
    model = FSDPv2(Seq2SeqLite().to(device), mesh=mesh)  # expect: XLA908
    encoder = FSDPv2(Encoder().to(device), mesh=mesh)
    optimizer = torch.optim.AdamW(list(model.parameters()) + list(encoder.parameters()), lr=1e-4)
    ckpt = CheckpointManager("/mnt/ckpt/seq2seq", save_interval=250)
    for step in range(steps):
        ids = torch.randint(0, 16000, (32, 128), device=device)
        xs.mark_sharding(ids, mesh, ("fsdp", None))
        optimizer.zero_grad()
        out = model(ids, ids.roll(-1, dims=1))
        loss = out["loss"] + encoder(warmup.expand(32, 512))[0].mean() * 0.0
        loss.backward()
        optimizer.step()
        ckpt.save(step, {"model": model.state_dict(), "optim": optimizer.state_dict()})
        torch_xla.sync()


if __name__ == "__main__":
    main()
