"""Pre-train a small decoder LM with tinyaccel.

    python train_lm.py --corpus /mnt/bucket/owt_train.pt --wandb-project tiny-lm
"""
import argparse
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
import wandb

from lm_data import PackedLMDataset, cache_corpus
from tinyaccel import Accelerator, launch


class TinyGPT(nn.Module):
    def __init__(self, vocab_size, dim, layers, heads=8, max_len=1024):
        super().__init__()
        self.tok = nn.Embedding(vocab_size, dim)
        self.pos = nn.Embedding(max_len, dim)
        layer = nn.TransformerEncoderLayer(dim, heads, 4 * dim, dropout=0.0, batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, layers)
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab_size, bias=False)

    def forward(self, idx):
        t = idx.size(1)
        pos = torch.arange(t, device=idx.device)
        mask = nn.Transformer.generate_square_subsequent_mask(t, device=idx.device)
        x = self.blocks(self.tok(idx) + self.pos(pos), mask=mask, is_causal=True)
        return self.head(self.norm(x))


def training_function(index, args):
    accelerator = Accelerator(mixed_precision="bf16")
    local_train = os.path.join("/tmp", os.path.basename(args.corpus))
    local_valid = os.path.join("/tmp", os.path.basename(args.valid))
    if accelerator.is_local_main_process():
        cache_corpus(args.corpus, local_train)
        cache_corpus(args.valid, local_valid)
    accelerator.wait_for_everyone()
    if accelerator.is_main_process():  # expect: XLA604
        wandb.init(project=args.wandb_project, config=vars(args))

    train_ds = PackedLMDataset(local_train, args.seq_len)
    valid_ds = PackedLMDataset(local_valid, args.seq_len)
    model = TinyGPT(args.vocab_size, args.dim, args.layers)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.1)  # expect: XLA405
    model = accelerator.prepare_model(model)
    optimizer = accelerator.prepare_optimizer(optimizer)
    train_loader = accelerator.build_dataloader(train_ds, args.batch_size, shuffle=True)
    valid_loader = accelerator.build_dataloader(valid_ds, args.batch_size)

    for epoch in range(args.epochs):
        model.train()
        for step, (inputs, targets) in enumerate(train_loader):
            with accelerator.autocast():
                logits = model(inputs)
                loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.reshape(-1))
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
            if step % args.log_every == 0:
                accelerator.print(f"epoch {epoch} step {step} loss {loss.item():.4f}")  # expect: XLA507

        model.eval()
        losses = []
        with torch.no_grad():
            for inputs, targets in valid_loader:
                logits = model(inputs)
                losses.append(F.cross_entropy(logits.view(-1, logits.size(-1)), targets.reshape(-1)))
        valid_loss = accelerator.reduce_mean(torch.stack(losses).mean().item())
        accelerator.print(f"epoch {epoch}: valid loss {valid_loss:.4f} ppl {math.exp(valid_loss):.1f}")
        accelerator.save(accelerator.unwrap_model(model).state_dict(), os.path.join(args.output_dir, "model.pt"))


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--corpus", required=True)
    p.add_argument("--valid", required=True)
    p.add_argument("--wandb-project", dest="wandb_project", default="tiny-lm")
    p.add_argument("--output-dir", dest="output_dir", default="out")
    p.add_argument("--vocab-size", dest="vocab_size", type=int, default=50304)
    p.add_argument("--dim", type=int, default=512)
    p.add_argument("--layers", type=int, default=8)
    p.add_argument("--seq-len", dest="seq_len", type=int, default=512)
    p.add_argument("--batch-size", dest="batch_size", type=int, default=16)
    p.add_argument("--lr", type=float, default=6e-4)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--log-every", dest="log_every", type=int, default=100)
    return p.parse_args()


if __name__ == "__main__":
    launch(training_function, args=(parse_args(),))
