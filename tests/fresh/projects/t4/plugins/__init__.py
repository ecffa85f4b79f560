"""Plugins receive the trainer at fixed points of the loop."""


class Plugin:
    def on_train_start(self, trainer):
        pass

    def on_step_end(self, trainer, step, loss):
        pass

    def on_epoch_end(self, trainer, epoch):
        pass


class PluginManager:
    def __init__(self, plugins=()):
        self.plugins = list(plugins)

    def add(self, plugin):
        self.plugins.append(plugin)
        return plugin

    def train_start(self, trainer):
        for p in self.plugins:
            p.on_train_start(trainer)

    def step_end(self, trainer, step, loss):
        for p in self.plugins:
            p.on_step_end(trainer, step, loss)

    def epoch_end(self, trainer, epoch):
        for p in self.plugins:
            p.on_epoch_end(trainer, epoch)
