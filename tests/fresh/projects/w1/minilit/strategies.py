"""Strategies decide where the module lives, how processes start and how a step is applied.

The base class is the single-process CPU behaviour; accelerator strategies override it.
"""
import torch


class Strategy:
    global_rank = 0
    world_size = 1

    def __init__(self):
        self.root_device = torch.device("cpu")

    def launch(self, fn, *args):
        fn(0, *args)

    def setup_environment(self, index):
        pass

    def setup_module(self, module):
        return module.to(self.root_device)

    def process_dataloader(self, loader):
        return loader

    def backward(self, loss):
        loss.backward()

    def optimizer_step(self, optimizer):
        optimizer.step()

    def reduce(self, value):
        return value

    def wait_for_device(self):
        pass

    def save_checkpoint(self, checkpoint, filepath):
        torch.save(checkpoint, filepath)

    def teardown(self):
        pass


class SingleDeviceStrategy(Strategy):
    """Plain single-process training on the CPU."""
