"""FSDP x tensor-parallel training of a decoder LM with SPMD: one process per TPU VM host.

    python train_spmd.py --data '/mnt/blocks/*.npy' --tp 4      (on every host)
"""
import argparse

import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.runtime as xr

from checkpoint import BestTracker, export_consolidated, init_checkpointing, maybe_resume
from data import build_train_loader
from model import DecoderLM, LMConfig
from sharding import batch_sharding, make_mesh, shard_model
from utils import log_metrics, seed_everything


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--ckpt-dir", default="/mnt/ckpt/decoder")
    ap.add_argument("--tp", type=int, default=4)
    ap.add_argument("--seq-len", type=int, default=2048)
    ap.add_argument("--per-device-batch", type=int, default=4)
    ap.add_argument("--lr", type=float, default=3e-4)
    ap.add_argument("--max-grad-norm", type=float, default=1.0)
    ap.add_argument("--max-steps", type=int, default=50000)
    ap.add_argument("--log-every", type=int, default=10)
    ap.add_argument("--save-every", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    return ap.parse_args()


def main():
    args = parse_args()
    seed_everything(args.seed)
    xr.use_spmd()  # expect: XLA906
    mesh = make_mesh(args.tp)
    device = torch_xla.device()
    model = DecoderLM(LMConfig()).to(device)
    shard_model(model, mesh)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.95), weight_decay=0.1)
    manager = init_checkpointing(args.ckpt_dir, args.save_every)
    step = maybe_resume(manager, model)

    loader = build_train_loader(args.data, args.seq_len, args.per_device_batch)
    batches = pl.MpDeviceLoader(loader, device, input_sharding=batch_sharding(mesh))
    tracker = BestTracker()
    model.train()
    while step < args.max_steps:
        for batch in batches:
            loss = model(batch["input_ids"], batch["labels"])
            loss.backward()
            grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            step += 1
            tracker.update(step, loss)
            if step % args.log_every == 0:
                xm.add_step_closure(log_metrics, args=(step, loss, grad_norm, args.lr))
            manager.save(step, {"model": model.state_dict()})
            if step >= args.max_steps:
                break
    export_consolidated(model, f"{args.ckpt_dir}/final_consolidated.pt")


if __name__ == "__main__":
    main()
