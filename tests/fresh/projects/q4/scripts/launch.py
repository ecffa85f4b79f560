"""Start vitpod on every chip of this host (run the same command on every host of the slice):

    gcloud compute tpus tpu-vm ssh vitpod --worker=all --command="python vitpod/scripts/launch.py"
"""
import argparse
import os

import torch_xla.distributed.xla_multiprocessing as xmp

from vitpod import config
from vitpod.engine import main_worker


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=config.EPOCHS)
    return ap.parse_args()


if __name__ == "__main__":
    os.environ.setdefault("PJRT_DEVICE", "TPU")
    args = parse_args()
    xmp.spawn(main_worker, args=(args,), nprocs=config.NUM_CORES)  # expect: XLA001
