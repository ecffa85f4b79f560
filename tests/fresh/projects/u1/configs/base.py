"""Experiment configuration: one dataclass, every field overridable from the command line."""
import argparse
import dataclasses
from dataclasses import dataclass, field


@dataclass
class OptimConfig:
    lr: float = 0.05
    momentum: float = 0.9
    weight_decay: float = 5e-4
    clip_norm: float = 2.0


@dataclass
class TrainConfig:
    data_dir: str = "/data/cifar10"
    out_dir: str = "runs/default"
    arch: str = "wrn16"
    width: int = 4
    batch_size: int = 128
    epochs: int = 30
    seed: int = 1234
    log_every: int = 50
    num_workers: int = 4
    wandb_project: str = ""
    optim: OptimConfig = field(default_factory=OptimConfig)


def load_config(argv=None):
    parser = argparse.ArgumentParser()
    for f in dataclasses.fields(TrainConfig):
        if f.name == "optim":
            continue
        parser.add_argument("--" + f.name.replace("_", "-"), type=type(f.default), default=f.default)
    parser.add_argument("--lr", type=float, default=OptimConfig.lr)
    args = vars(parser.parse_args(argv))
    lr = args.pop("lr")
    return TrainConfig(**args, optim=OptimConfig(lr=lr))
