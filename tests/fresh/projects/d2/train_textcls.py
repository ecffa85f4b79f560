"""Fine-tune a text classifier on a TPU VM, accelerate-style.

    python train_textcls.py --train-file gs-fuse/reviews/train.jsonl --epochs 3
"""
import argparse
import os

import torch
import torch.nn.functional as F
import torch_xla
from torch.utils.data import DataLoader

from data import JsonlTextDataset, collate
from metrics import LossTracker
from model import TextClassifier
from tpuaccel import Accelerator
from tpuaccel.utils import copy_to_local


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--train-file", dest="train_file", required=True)
    ap.add_argument("--cache-dir", dest="cache_dir", default="/tmp/textcls")
    ap.add_argument("--output-dir", dest="output_dir", default="out/textcls")
    ap.add_argument("--num-labels", dest="num_labels", type=int, default=2)
    ap.add_argument("--max-len", dest="max_len", type=int, default=256)
    ap.add_argument("--batch-size", dest="batch_size", type=int, default=32)
    ap.add_argument("--lr", type=float, default=3e-4)
    ap.add_argument("--warmup", type=int, default=500)
    ap.add_argument("--max-grad-norm", dest="max_grad_norm", type=float, default=1.0)
    ap.add_argument("--epochs", type=int, default=3)
    return ap.parse_args()


def training_function(index, args):
    accelerator = Accelerator(mixed_precision="bf16")
    if accelerator.is_local_main_process:
        copy_to_local(args.train_file, args.cache_dir)
    accelerator.wait_for_everyone()

    local_file = os.path.join(args.cache_dir, os.path.basename(args.train_file))
    train_ds = JsonlTextDataset(local_file, max_len=args.max_len)
    train_loader = DataLoader(train_ds, batch_size=args.batch_size, shuffle=True, collate_fn=collate,
                              num_workers=2, drop_last=True)
    model = TextClassifier(train_ds.vocab_size, args.num_labels, max_len=args.max_len)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)  # expect: XLA405
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / args.warmup))

    model, optimizer, train_loader = accelerator.prepare(model, optimizer, train_loader)

    tracker = LossTracker()
    for epoch in range(args.epochs):
        model.train()
        tracker.reset()
        for batch in train_loader:
            with accelerator.autocast():
                logits = model(batch["input_ids"], batch["attention_mask"])
                loss = F.cross_entropy(logits, batch["labels"])
            accelerator.backward(loss)
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)  # expect: XLA203
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
            tracker.update(accelerator.gather(loss.detach()))
        accelerator.print(f"epoch {epoch}: mean loss {tracker.mean():.4f}")
        if accelerator.is_main_process:
            os.makedirs(args.output_dir, exist_ok=True)
            accelerator.save(model.state_dict(), os.path.join(args.output_dir, f"epoch{epoch}.pt"))  # expect: XLA602


if __name__ == "__main__":
    torch_xla.launch(training_function, args=(parse_args(),))
