import os
import random
import time

import numpy as np
import torch


def seed_all(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)  # expect: XLA206
    torch.cuda.manual_seed_all(seed)


def on_tpu():
    return os.environ.get("PJRT_DEVICE", "").upper() == "TPU"


class Timer:
    """Wall-clock timer that waits for CUDA work when there is a GPU."""

    def __enter__(self):
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        self.t0 = time.perf_counter()
        return self

    def __exit__(self, *exc):
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        self.elapsed = time.perf_counter() - self.t0
        return False
