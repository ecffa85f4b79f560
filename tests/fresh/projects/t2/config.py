import argparse
from dataclasses import dataclass, fields


@dataclass
class Config:
    project: str = "resmlp-synthetic"
    seed: int = 0
    in_dim: int = 1024
    hidden: int = 2048
    classes: int = 100
    num_samples: int = 65536
    batch_size: int = 256
    lr: float = 0.1
    epochs: int = 10
    log_every: int = 100
    out_dir: str = "runs/resmlp"

    @classmethod
    def from_args(cls, argv=None):
        p = argparse.ArgumentParser()
        for f in fields(cls):
            p.add_argument("--" + f.name.replace("_", "-"), dest=f.name, type=type(f.default), default=f.default)
        return cls(**vars(p.parse_args(argv)))
