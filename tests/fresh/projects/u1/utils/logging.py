"""Console and W&B logging for the training loop."""
import logging
import os
import sys
import time

from .dist import get_rank, is_main

_LOG = logging.getLogger("wrn")


def setup_logging(out_dir):
    rank = get_rank()
    logging.basicConfig(
        stream=sys.stdout,
        level=logging.INFO if rank == 0 else logging.WARNING,
        format=f"[rank {rank}] %(asctime)s %(message)s",
    )
    if is_main():
        os.makedirs(out_dir, exist_ok=True)
    return _LOG


def init_tracker(cfg):
    if not cfg.wandb_project:
        return None
    if is_main():  # expect: XLA604
        import wandb

        return wandb.init(project=cfg.wandb_project, name=os.path.basename(cfg.out_dir), config=vars(cfg))
    return None


class AverageMeter:
    """Running mean of a per-step value, plus images per second since the last reset."""

    def __init__(self):
        self.reset()

    def reset(self):
        self.total = 0.0
        self.count = 0
        self.start = time.time()

    def update(self, value, n=1):
        self.total += float(value) * n  # expect: XLA501
        self.count += n

    @property
    def avg(self):
        return self.total / max(1, self.count)

    def throughput(self):
        return self.count / max(1e-6, time.time() - self.start)
