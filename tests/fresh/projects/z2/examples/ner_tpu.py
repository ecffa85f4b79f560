"""Token classification fine-tuning. GPU: python ner_tpu.py; TPU VM: the same command."""
import argparse

import torch
from torch.utils.data import DataLoader

from ner_lib import ConllDataset, TokenTagger, pad_collate
from tinyacc import Accelerator, is_torch_xla_available, notebook_launcher, set_seed


def training_function(index, args):
    accelerator = Accelerator(mixed_precision=args.mixed_precision)
    set_seed(args.seed)
    train_ds = ConllDataset(args.train_file, max_len=128)
    eval_ds = ConllDataset(args.eval_file, max_len=128)
    train_loader = DataLoader(train_ds, batch_size=args.batch_size, shuffle=True, collate_fn=pad_collate, drop_last=True)
    eval_loader = DataLoader(eval_ds, batch_size=args.batch_size, collate_fn=pad_collate)
    model = TokenTagger(args.vocab_size, args.num_labels)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    model, optimizer, train_loader, eval_loader = accelerator.prepare(model, optimizer, train_loader, eval_loader)

    for epoch in range(3):
        model.train()
        for step, batch in enumerate(train_loader):
            with accelerator.autocast():
                loss = model(**batch)
            accelerator.backward(loss)
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)  # expect: XLA203
            optimizer.step()
            optimizer.zero_grad()
            if step % args.log_every == 0:
                accelerator.print(f"epoch {epoch} step {step} loss {loss.item():.4f}")  # expect: XLA507

        model.eval()
        correct = total = 0
        for batch in eval_loader:
            with torch.no_grad():
                logits = model(batch["input_ids"], batch["attention_mask"])
            mask = batch["labels"] != -100
            correct += (logits.argmax(-1) == batch["labels"])[mask].sum().item()
            total += mask.sum().item()
        accelerator.print(f"epoch {epoch}: token accuracy {correct / max(total, 1):.4f}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--train_file", default="data/train.pt")
    parser.add_argument("--eval_file", default="data/dev.pt")
    parser.add_argument("--vocab_size", type=int, default=30000)
    parser.add_argument("--num_labels", type=int, default=9)
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=5e-5)
    parser.add_argument("--max_grad_norm", type=float, default=1.0)
    parser.add_argument("--log_every", type=int, default=20)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--mixed_precision", default="fp16", choices=["no", "fp16", "bf16"])
    args = parser.parse_args()

    num_processes = None
    if is_torch_xla_available():
        import torch_xla.runtime as xr

        num_processes = xr.global_runtime_device_count()  # expect: XLA003
    notebook_launcher(training_function, (args,), num_processes=num_processes)


if __name__ == "__main__":
    main()
