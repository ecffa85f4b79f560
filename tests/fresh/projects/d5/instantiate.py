"""Build objects from config nodes: `_target_` names a class in REGISTRY, the other fields are kwargs."""
import dataclasses

import torch

from model import TinyLM

REGISTRY = {
    "TinyLM": TinyLM,
    "AdamW": torch.optim.AdamW,
    "SGD": torch.optim.SGD,
    "Adafactor": torch.optim.Adafactor,
}


def to_dict(node):
    return dataclasses.asdict(node) if dataclasses.is_dataclass(node) else dict(node)


def instantiate(node, *args, **overrides):
    params = to_dict(node)
    target = params.pop("_target_")
    params.update(overrides)
    try:
        cls = REGISTRY[target]
    except KeyError:
        raise KeyError(f"unknown _target_ {target!r}; known: {sorted(REGISTRY)}") from None
    return cls(*args, **params)
