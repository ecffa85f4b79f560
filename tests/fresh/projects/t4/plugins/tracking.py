import torch
import torch_xla.core.xla_model as xm
import wandb

from plugins import Plugin


class WandbTracker(Plugin):
    def __init__(self, project, config):
        self.project = project
        self.config = config
        self.run = None
        self.losses = []

    def on_train_start(self, trainer):
        if xm.is_master_ordinal():  # expect: XLA604
            self.run = wandb.init(project=self.project, config=self.config)

    def on_step_end(self, trainer, step, loss):
        self.losses.append(loss.detach())

    def on_epoch_end(self, trainer, epoch):
        mean = torch.stack(self.losses).mean().item()
        self.losses.clear()
        if self.run is not None:
            self.run.log({"epoch": epoch, "loss": mean, "lr": trainer.optimizer.param_groups[0]["lr"]})
