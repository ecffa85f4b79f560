import wandb
import torch_xla.core.xla_model as xm

from utils import constants


def init_tracking(args):
    if constants.is_main_process():  # expect: XLA604
        wandb.init(project=args.project, name=args.run_name, config=vars(args))


class MetricTracker:
    def __init__(self):
        self.total = 0.0
        self.count = 0

    def add(self, loss):
        self.total += loss.item()  # expect: XLA501
        self.count += 1

    def summary(self, epoch):
        xm.master_print(f"epoch {epoch} mean loss {self.total / max(self.count, 1):.4f}")
