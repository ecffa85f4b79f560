"""Train a small causal LM on a TPU VM: python train_lm.py"""
import math
import os

import torch
import wandb
from torch.utils.data import DataLoader
from tqdm.auto import tqdm

from data_utils import TokenBlocks, collate
from mini_accel import Accelerator, notebook_launcher, set_seed
from modeling import SmallLM

CONFIG = {
    "seed": 17,
    "vocab_size": 32000,
    "dim": 384,
    "block_size": 256,
    "batch_size": 16,
    "lr": 6e-4,
    "epochs": 2,
    "log_every": 50,
    "train_path": "data/train_ids.pt",
    "eval_path": "data/val_ids.pt",
    "out_dir": "out",
}


def training_function(index, cfg):
    accelerator = Accelerator(mixed_precision="bf16")
    set_seed(cfg["seed"])
    if accelerator.is_local_main_process:  # expect: XLA604
        wandb.init(project="small-lm", config=cfg)
    model = SmallLM(cfg["vocab_size"], dim=cfg["dim"], max_len=cfg["block_size"])
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg["lr"], weight_decay=0.1)
    train_dl = DataLoader(TokenBlocks(cfg["train_path"], cfg["block_size"]), batch_size=cfg["batch_size"], shuffle=True, collate_fn=collate)
    eval_dl = DataLoader(TokenBlocks(cfg["eval_path"], cfg["block_size"]), batch_size=cfg["batch_size"], collate_fn=collate)
    model, optimizer, train_dl, eval_dl = accelerator.prepare(model, optimizer, train_dl, eval_dl)
    progress = tqdm(total=cfg["epochs"] * len(train_dl), disable=not accelerator.is_local_main_process)
    for epoch in range(cfg["epochs"]):
        model.train()
        for step, batch in enumerate(train_dl):
            with accelerator.autocast():
                out = model(batch["input_ids"], labels=batch["labels"])
            loss = out["loss"]
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
            if step % cfg["log_every"] == 0:
                accelerator.print(f"epoch {epoch} step {step} loss {loss.item():.4f} acc {out['acc'].item():.3f}")  # expect: XLA507
            progress.update(1)
            progress.set_postfix(loss=loss.item())  # expect: XLA501
        model.eval()
        losses = []
        with torch.no_grad():
            for batch in eval_dl:
                out = model(batch["input_ids"], labels=batch["labels"])
                losses.append(accelerator.gather(out["loss"].unsqueeze(0)))
        eval_loss = torch.cat(losses).mean().item()
        accelerator.print(f"epoch {epoch}: eval loss {eval_loss:.4f}, ppl {math.exp(eval_loss):.1f}")
        if accelerator.is_main_process:
            os.makedirs(cfg["out_dir"], exist_ok=True)
            torch.save(accelerator.unwrap_model(model).state_dict(), f"{cfg['out_dir']}/epoch{epoch}.pt")  # expect: XLA601
    accelerator.wait_for_everyone()


if __name__ == "__main__":
    notebook_launcher(training_function, args=(CONFIG,))
