"""Train the text-conditioned UNet.

    torchrun --nproc_per_node=8 train_unet.py --data /data/cc3m     # GPUs
    PJRT_DEVICE=TPU python train_unet.py --data /data/cc3m          # TPU VM
"""
import argparse
import os

import torch
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler

from ddpm import accel
from ddpm.accel import is_torch_xla_available
from ddpm.data import CaptionedImages
from ddpm.logger import MetricsLogger
from ddpm.sampling import save_preview
from ddpm.schedule import NoiseSchedule
from ddpm.text import load_frozen_text_encoder
from ddpm.unet import UNet

if is_torch_xla_available():
    import torch_xla
    import torch_xla.distributed.parallel_loader as pl


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--text-encoder", default="openai/clip-vit-base-patch32")
    ap.add_argument("--channels", type=int, default=128)
    ap.add_argument("--timesteps", type=int, default=1000)
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--lr", type=float, default=1e-4)
    ap.add_argument("--max-grad-norm", type=float, default=1.0)
    ap.add_argument("--log-every", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="out/ddpm")
    return ap.parse_args()


def run(index, args):
    accel.init_distributed()
    accel.seed_everything(args.seed)
    device = accel.device()
    text_encoder = load_frozen_text_encoder(args.text_encoder, device)
    unet = UNet(args.channels, cond_dim=text_encoder.config.hidden_size, timesteps=args.timesteps).to(device)
    if is_torch_xla_available():
        unet = DDP(unet, broadcast_buffers=False)  # expect: XLA101
        scaler = None
    else:
        unet = DDP(unet, device_ids=[index], output_device=index)
        scaler = torch.cuda.amp.GradScaler()
    optimizer = torch.optim.AdamW(unet.parameters(), lr=args.lr, weight_decay=1e-2)

    dataset = CaptionedImages(args.data, size=64)
    sampler = DistributedSampler(dataset, num_replicas=accel.world_size(), rank=accel.rank(), shuffle=True, drop_last=True)
    loader = DataLoader(dataset, batch_size=args.batch_size, sampler=sampler, num_workers=8, drop_last=True)
    if is_torch_xla_available():
        loader = pl.MpDeviceLoader(loader, device)

    schedule = NoiseSchedule(args.timesteps, device)
    logger = MetricsLogger(every=args.log_every)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        unet.train()
        for step, (images, tokens) in enumerate(loader):
            if not is_torch_xla_available():
                images, tokens = images.cuda(non_blocking=True), tokens.cuda(non_blocking=True)
            with torch.no_grad():
                cond = text_encoder(input_ids=tokens).last_hidden_state
            noise = torch.randn_like(images)
            t = schedule.sample_timesteps(images.size(0), device=images.device)
            noisy = schedule.add_noise(images, noise, t)
            optimizer.zero_grad(set_to_none=True)
            with accel.autocast():
                pred = unet(noisy, t, cond.to(noisy.dtype))
                loss = F.mse_loss(pred.float(), noise)
            if is_torch_xla_available():
                loss.backward()
                grad_norm = torch.nn.utils.clip_grad_norm_(unet.parameters(), args.max_grad_norm)
                accel.optimizer_step(optimizer)
            else:
                scaler.scale(loss).backward()
                scaler.unscale_(optimizer)
                grad_norm = torch.nn.utils.clip_grad_norm_(unet.parameters(), args.max_grad_norm)
                scaler.step(optimizer)
                scaler.update()
            logger.log(step, loss=loss.detach(), grad_norm=grad_norm)
        if accel.rank() == 0:
            save_preview(unet.module, schedule, text_encoder, tokens[:4], os.path.join(args.out, f"epoch{epoch}.png"))


def main():
    args = parse_args()
    os.makedirs(args.out, exist_ok=True)
    if is_torch_xla_available():
        torch_xla.launch(run, args=(args,))
    else:
        run(int(os.environ["LOCAL_RANK"]), args)


if __name__ == "__main__":
    main()
