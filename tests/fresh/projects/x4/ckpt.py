import os

import torch_xla.core.xla_model as xm


class CheckpointManager:
    """Keeps the last `keep` checkpoints of a run."""

    def __init__(self, directory, keep=3):
        self.directory = directory
        self.keep = keep
        self.saved = []

    def save(self, model, epoch):
        path = os.path.join(self.directory, f"model_{epoch}.bin")
        xm.save(model.state_dict(), path)
        self.saved.append(path)
        while len(self.saved) > self.keep:
            old = self.saved.pop(0)
            if os.path.exists(old):
                os.remove(old)
