"""Accelerator-agnostic strategy base: where the model lives and how a step is applied."""
import torch


class Strategy:
    launcher = None

    def __init__(self):
        self.root_device = torch.device("cpu")

    @property
    def global_rank(self):
        return 0

    @property
    def is_global_zero(self):
        return self.global_rank == 0

    def setup_environment(self):
        pass

    def setup_module(self, module):
        return module.to(self.root_device)

    def process_dataloader(self, loader):
        return loader

    def optimizer_step(self, optimizer):
        return optimizer.step()

    def save_checkpoint(self, state, path):
        torch.save(state, path)

    def barrier(self, name=None):
        pass


class CPUStrategy(Strategy):
    """Runs in the current process on the CPU."""
