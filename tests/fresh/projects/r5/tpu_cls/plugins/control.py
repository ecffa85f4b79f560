import os


class EarlyStopping:
    """Stops training when the step loss has not improved for `patience` steps."""

    def __init__(self, patience=500, min_delta=1e-4):
        self.patience = patience
        self.min_delta = min_delta
        self.best = float("inf")
        self.bad_steps = 0

    def on_step_end(self, loop, step, loss):
        if loss < self.best - self.min_delta:  # expect: XLA502
            self.best = loss.detach()
            self.bad_steps = 0
        else:
            self.bad_steps += 1
        if self.bad_steps > self.patience:
            loop.should_stop = True


class BestCheckpoint:
    """Saves the weights whenever the validation accuracy improves."""

    def __init__(self, ckpt_dir):
        self.ckpt_dir = ckpt_dir
        self.best_acc = -1.0

    def on_epoch_end(self, loop, epoch, val_acc):
        if val_acc <= self.best_acc:
            return
        self.best_acc = val_acc
        if loop.rank == 0:
            loop.save_checkpoint(os.path.join(self.ckpt_dir, "best.pt"))  # expect: XLA602
