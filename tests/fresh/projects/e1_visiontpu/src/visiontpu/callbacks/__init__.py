"""Callbacks are plugins: each one registers under a name and the command line lists which run.

A callback implements any of the engine events (`on_fit_start`, `on_step_begin`,
`on_after_backward`, `on_step_end`, `on_epoch_end`, `on_fit_end`); the engine looks the
method up by name and skips the events a callback does not define.
"""
from .ema import ModelEma
from .guards import NanGuard
from .speed import SpeedMeter
from .tensorboard import TensorBoardLogger

CALLBACKS = [
    ("speed", SpeedMeter),
    ("nan_guard", NanGuard),
    ("tensorboard", TensorBoardLogger),
    ("ema", ModelEma),
]


def build_callbacks(names, **kwargs):
    table = dict(CALLBACKS)
    out = []
    for name in names:
        cls = table[name.strip()]
        out.append(cls.from_args(**kwargs))
    return out
