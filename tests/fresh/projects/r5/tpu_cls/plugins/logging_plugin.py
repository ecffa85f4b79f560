import json
import os

import wandb


class LossHistory:
    """Keeps the per-step loss curve and writes it out once per epoch."""

    def __init__(self, out_dir):
        self.out_dir = out_dir
        self.losses = []

    def on_step_end(self, loop, step, loss):
        self.losses.append(loss.item())  # expect: XLA501

    def on_epoch_end(self, loop, epoch, val_acc):
        if loop.rank == 0:
            os.makedirs(self.out_dir, exist_ok=True)
            with open(os.path.join(self.out_dir, f"losses_{epoch:03d}.json"), "w") as f:
                json.dump({"epoch": epoch, "losses": self.losses, "val_acc": val_acc}, f)
        self.losses = []


class WandbPlugin:
    def __init__(self, project, config):
        self.project = project
        self.config = config
        self.active = False

    def on_train_begin(self, loop):
        if loop.is_master:  # expect: XLA604
            wandb.init(project=self.project, config=self.config)
            self.active = True

    def on_epoch_end(self, loop, epoch, val_acc):
        if self.active:
            wandb.log({"epoch": epoch, "val_acc": val_acc})
