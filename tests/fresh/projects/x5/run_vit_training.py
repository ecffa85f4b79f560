"""ViT training with XLA FSDP (shape of ronghanghu/vit_10b_fsdp_example run_vit_training.py)."""
import argparse
import os

import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.xla_multiprocessing as xmp

import utils
from data import build_train_loader
from model_builder import build_fsdp_vit


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data_dir", default="/datasets/imagenet-1k")
    p.add_argument("--ckpt_dir", default="/tmp/vit_fsdp")
    p.add_argument("--gcs_dir", default="gs://my-bucket/vit_fsdp")
    p.add_argument("--batch_size", type=int, default=1024)
    p.add_argument("--num_epochs", type=int, default=300)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--clip_grad_norm", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args()


def train(args):
    torch_xla.manual_seed(args.seed)
    device = torch_xla.device()
    model = build_fsdp_vit(args, device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.1)
    train_loader, sampler = build_train_loader(args, device)
    logger = utils.MetricLogger()
    for epoch in range(args.num_epochs):
        sampler.set_epoch(epoch)
        timer = utils.Timer()
        for images, labels in train_loader:
            output = model(images)
            loss = torch.nn.functional.cross_entropy(output, labels)
            optimizer.zero_grad()
            loss.backward()
            model.clip_grad_norm_(args.clip_grad_norm)
            optimizer.step()
            xm.mark_step()  # expect: XLA805
            logger.update(loss=loss, lr=optimizer.param_groups[0]["lr"])
        xm.master_print(f"epoch {epoch} done in {timer.elapsed():.1f}s: {logger}")
        utils.save_sharded(model, optimizer, args.ckpt_dir, epoch)
    utils.save_for_eval(model, args.ckpt_dir)
    if utils.is_main_process():  # expect: XLA604
        utils.upload_to_gcs(args.ckpt_dir, args.gcs_dir)


def _mp_fn(index, args):
    train(args)


if __name__ == "__main__":
    args = parse_args()
    args.global_batch_size = args.batch_size * utils.get_world_size()  # expect: XLA003
    os.makedirs(args.ckpt_dir, exist_ok=True)
    xmp.spawn(_mp_fn, args=(args,))
