"""Writing and reading Trainer checkpoints: weights, optimizer state, progress."""
import json
import os

import torch


class CheckpointMixin:
    def _save(self, output_dir):
        os.makedirs(output_dir, exist_ok=True)
        torch.save(self.model.state_dict(), os.path.join(output_dir, "model.pt"))
        self._save_optimizer(output_dir)
        self._save_state(output_dir)

    def _save_optimizer(self, output_dir):
        torch.save(self.optimizer.state_dict(), os.path.join(output_dir, "optimizer.pt"))  # expect: XLA601

    def _save_state(self, output_dir):
        with open(os.path.join(output_dir, "trainer_state.json"), "w") as f:
            json.dump({"global_step": self.global_step, "epoch": self.epoch}, f)

    def load_checkpoint(self, checkpoint_dir):
        state = torch.load(os.path.join(checkpoint_dir, "model.pt"), map_location="cpu")
        self.model.load_state_dict(state)
        with open(os.path.join(checkpoint_dir, "trainer_state.json")) as f:
            progress = json.load(f)
        self.global_step, self.epoch = progress["global_step"], progress["epoch"]
