"""python train.py --data-dir gs://bucket/reviews"""
import argparse
import os

import torch
import torch.nn.functional as F
import torch_xla
import torch_xla.runtime as xr

from factory import build_everything
from metrics import MetricTracker, init_tracking
from tpuaccel import Accelerator, set_seed


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data-dir", dest="data_dir", required=True)
    p.add_argument("--output-dir", dest="output_dir", default="out")
    p.add_argument("--project", default="reviews")
    p.add_argument("--run-name", dest="run_name", default=None)
    p.add_argument("--vocab-size", dest="vocab_size", type=int, default=32000)
    p.add_argument("--dim", type=int, default=256)
    p.add_argument("--num-classes", dest="num_classes", type=int, default=5)
    p.add_argument("--max-len", dest="max_len", type=int, default=256)
    p.add_argument("--batch-size", dest="batch_size", type=int, default=32)
    p.add_argument("--eval-batch-size", dest="eval_batch_size", type=int, default=64)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--seed", type=int, default=42)
    return p.parse_args()


@torch.no_grad()
def evaluate(model, loader, accelerator):
    model.eval()
    correct, total = 0, 0
    for batch in loader:
        logits = model(batch["input_ids"], batch["attention_mask"])
        correct += (logits.argmax(-1) == batch["labels"]).sum().item()
        total += batch["labels"].numel()
    return accelerator.reduce_mean("eval_acc", correct / max(total, 1))


def training_function(index, cfg):
    accelerator = Accelerator(mixed_precision="bf16")
    set_seed(cfg.seed)
    model, optimizer, train_loader, eval_loader = build_everything(cfg, accelerator)
    run = init_tracking(accelerator, cfg)
    tracker = MetricTracker()
    for epoch in range(cfg.epochs):
        model.train()
        tracker.reset()
        for step, batch in enumerate(train_loader):
            with accelerator.autocast():
                logits = model(batch["input_ids"], batch["attention_mask"])
                loss = F.cross_entropy(logits, batch["labels"])
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
            tracker.update(logits, batch["labels"])
        eval_acc = evaluate(model, eval_loader, accelerator)
        if run is not None:
            run.log({"epoch": epoch, "train_acc": tracker.compute(), "eval_acc": eval_acc})
        accelerator.wait_for_everyone()
        if accelerator.is_global_main():
            accelerator.save(model.state_dict(), os.path.join(cfg.output_dir, f"epoch{epoch}.pt"))  # expect: XLA602


if __name__ == "__main__":
    args = parse_args()
    os.makedirs(args.output_dir, exist_ok=True)
    print(f"TPU chips: {xr.global_runtime_device_count()}")  # expect: XLA003
    torch_xla.launch(training_function, args=(args,))
