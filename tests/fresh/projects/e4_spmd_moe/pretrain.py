"""Pre-train a mixture-of-experts LM with SPMD on every host of a TPU pod.

    gcloud compute tpus tpu-vm ssh $TPU --worker=all --command="python3 pretrain.py --data 'gs://b/shards/*.bin'"
"""
import argparse

import torch
import torch.nn.functional as F
import torch_xla
import torch_xla.runtime as xr
from torch_xla.amp import autocast
from torch_xla.experimental.spmd_fully_sharded_data_parallel import SpmdFullyShardedDataParallel as FSDPv2

from moe.ckpt import Checkpointer
from moe.compile import maybe_compile
from moe.data import batch_iterator
from moe.env import configure_env
from moe.mesh import build_mesh, shard_output
from moe.model import MoEConfig, MoETransformer


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--ckpt-dir", default="gs://my-bucket/moe/ckpt")
    ap.add_argument("--per-device-batch", type=int, default=8)
    ap.add_argument("--seq-len", type=int, default=2048)
    ap.add_argument("--model-parallel", type=int, default=1)
    ap.add_argument("--lr", type=float, default=3e-4)
    ap.add_argument("--max-steps", type=int, default=100_000)
    ap.add_argument("--ckpt-every", type=int, default=1000)
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--seed", type=int, default=1234)
    return ap.parse_args()


def main():
    args = parse_args()
    configure_env(args)
    xr.use_spmd()  # expect: XLA906
    mesh = build_mesh(args.model_parallel)
    device = torch_xla.device()
    torch.manual_seed(args.seed)
    torch_xla.manual_seed(args.seed)

    model = MoETransformer(MoEConfig(seq_len=args.seq_len)).to(device)
    model = FSDPv2(model, mesh=mesh, shard_output=shard_output)
    model = maybe_compile(model, args.compile)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.95), weight_decay=0.1)
    ckpt = Checkpointer(args.ckpt_dir)
    step = ckpt.restore(model, optimizer)

    model.train()
    for batch in batch_iterator(args.data, args.per_device_batch, args.seq_len, mesh, device):
        with autocast(device):
            logits, aux_loss = model(batch["input_ids"])
            loss = F.cross_entropy(logits.flatten(0, 1).float(), batch["labels"].flatten()) + 0.01 * aux_loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        step += 1
        if step % args.ckpt_every == 0:
            ckpt.save_async(step, model, optimizer)
        if step >= args.max_steps:
            break
    ckpt.wait()


if __name__ == "__main__":
    main()
