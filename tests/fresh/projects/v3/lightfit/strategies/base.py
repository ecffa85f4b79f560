import torch


class Strategy:
    """Single-process CPU strategy; accelerators override what differs."""

    def root_device(self):
        return torch.device("cpu")

    def world_size(self):
        return 1

    def global_rank(self):
        return 0

    def is_global_zero(self):
        return self.global_rank() == 0

    def setup_model(self, model):
        return model.to(self.root_device())

    def wrap_loader(self, loader):
        return loader

    def optimizer_step(self, optimizer):
        optimizer.step()

    def save_checkpoint(self, state, path):
        torch.save(state, path)

    def teardown(self):
        pass
