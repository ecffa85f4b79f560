import torch
import wandb

from dist_utils import is_master


class Hook:
    def before_run(self, runner):
        pass

    def after_train_iter(self, runner):
        pass

    def after_train_epoch(self, runner):
        pass


class LoggerHook(Hook):
    def __init__(self, interval=50):
        self.interval = interval

    def after_train_iter(self, runner):
        if runner.iter % self.interval == 0 and is_master():
            print(f"epoch {runner.epoch} iter {runner.iter} lr {runner.current_lr():.2e}")


class LossHistoryHook(Hook):
    def __init__(self):
        self.history = []

    def after_train_iter(self, runner):
        self.history.append(runner.last_loss.item())  # expect: XLA501


class CheckpointHook(Hook):
    def __init__(self, out_dir, every=1):
        self.out_dir = out_dir
        self.every = every

    def after_train_epoch(self, runner):
        if (runner.epoch + 1) % self.every == 0 and is_master():
            runner.save_checkpoint(self.out_dir)  # expect: XLA602


class EvalHook(Hook):
    def __init__(self, val_loader):
        self.val_loader = val_loader

    @torch.no_grad()
    def after_train_epoch(self, runner):
        runner.model.eval()
        correct = 0
        for images, labels in self.val_loader:
            correct += (runner.model(images).argmax(1) == labels).sum()
        runner.model.train()
        runner.val_correct = correct.item()


class WandbHook(Hook):
    def before_run(self, runner):
        if is_master():
            wandb.init(project="shapes", config={"epochs": runner.max_epochs})
