import os

import torch
import torch_xla.distributed.xla_multiprocessing as xmp

from data import make_train_loader
from model import MLP
from trainer import CallbackHandler, Trainer
from trainer.callbacks import CheckpointCallback, EarlyStopping, ProgressCallback, WandbCallback

os.environ["XLA_USE_BF16"] = "1"  # expect: XLA705

FLAGS = {
    "num_cores": 8,
    "data": "/data/tabular/train.pt",
    "batch_size": 256,
    "lr": 1e-3,
    "epochs": 10,
    "output_dir": "/tmp/q9_run",
}


def _mp_fn(index, flags):
    loader = make_train_loader(flags["data"], flags["batch_size"])
    handler = CallbackHandler([ProgressCallback(log_every=50), EarlyStopping(patience=500)])
    handler.add(CheckpointCallback(every=2000))
    handler.add(WandbCallback(project="q9-tabular"))
    model = MLP(in_dim=128, hidden=512, num_classes=10)
    trainer = Trainer(model, torch.optim.Adam, loader, handler,
                      lr=flags["lr"], epochs=flags["epochs"], output_dir=flags["output_dir"])
    trainer.train()


if __name__ == "__main__":
    xmp.spawn(_mp_fn, args=(FLAGS,), nprocs=FLAGS["num_cores"])  # expect: XLA001
