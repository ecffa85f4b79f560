"""Structured configs (hydra-style dataclasses) and `key.sub=value` command-line overrides."""
import dataclasses
from dataclasses import dataclass, field


@dataclass
class ModelConf:
    _target_: str = "TinyLM"
    vocab_size: int = 32000
    dim: int = 512
    n_layers: int = 8
    n_heads: int = 8
    max_len: int = 1024
    dropout: float = 0.1
    ignore_index: int = -100


@dataclass
class OptimConf:
    _target_: str = "AdamW"
    lr: float = 3e-4
    weight_decay: float = 0.1


@dataclass
class DataConf:
    path: str = "data/tokens.npy"
    seq_len: int = 1024
    batch_size: int = 16
    workers: int = 2


@dataclass
class TrainConf:
    model: ModelConf = field(default_factory=ModelConf)
    optim: OptimConf = field(default_factory=OptimConf)
    data: DataConf = field(default_factory=DataConf)
    epochs: int = 1
    log_every: int = 20
    seed: int = 1234
    precision: str = "bf16"
    out_dir: str = "outputs/tinylm"


def _convert(old, text):
    if isinstance(old, bool):
        return text.lower() in ("1", "true", "yes")
    return type(old)(text)


def apply_overrides(cfg, overrides):
    """Apply `optim.lr=1e-4`-style overrides in place and return the config."""
    for item in overrides:
        key, _, text = item.partition("=")
        *path, leaf = key.split(".")
        node = cfg
        for name in path:
            node = getattr(node, name)
        if not dataclasses.is_dataclass(node) or not hasattr(node, leaf):
            raise KeyError(f"unknown config key {key!r}")
        setattr(node, leaf, _convert(getattr(node, leaf), text))
    return cfg


def load_config(argv):
    return apply_overrides(TrainConf(), argv)
