"""Plugins and the registry that fires them.

A plugin is any object with some of the methods on_train_begin(loop),
on_step_end(loop, step, loss) and on_epoch_end(loop, epoch, val_acc).
"""
from .control import BestCheckpoint, EarlyStopping
from .logging_plugin import LossHistory, WandbPlugin

EVENTS = ("train_begin", "step_end", "epoch_end")


class HookRegistry:
    def __init__(self, plugins=()):
        self.by_event = {event: [] for event in EVENTS}
        for plugin in plugins:
            for event in EVENTS:
                if hasattr(plugin, "on_" + event):
                    self.by_event[event].append(plugin)

    def train_begin(self, loop):
        for plugin in self.by_event["train_begin"]:
            plugin.on_train_begin(loop)

    def step_end(self, loop, step, loss):
        for plugin in self.by_event["step_end"]:
            plugin.on_step_end(loop, step, loss)

    def epoch_end(self, loop, epoch, val_acc):
        for plugin in self.by_event["epoch_end"]:
            plugin.on_epoch_end(loop, epoch, val_acc)


__all__ = ["BestCheckpoint", "EarlyStopping", "HookRegistry", "LossHistory", "WandbPlugin"]
