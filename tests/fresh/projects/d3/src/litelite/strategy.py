"""Strategy: where the processes come from and how a step is applied. This base runs on one CPU."""
import torch


class Strategy:
    def __init__(self):
        self.root_device = torch.device("cpu")

    def launch(self, function, *args):
        return function(0, *args)

    def setup_environment(self, index):
        pass

    def seed(self, seed):
        torch.manual_seed(seed)

    def setup_module(self, module):
        return module.to(self.root_device)

    def process_dataloader(self, loader):
        return loader

    def optimizer_step(self, optimizer):
        optimizer.step()

    @property
    def is_global_zero(self):
        return True

    def barrier(self, name="barrier"):
        pass

    def save_checkpoint(self, checkpoint, path):
        torch.save(checkpoint, path)
