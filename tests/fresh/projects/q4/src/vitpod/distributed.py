"""Process-group setup and rank helpers."""
import warnings

import torch.distributed as dist
import torch_xla.runtime as xr

from . import config

# fail loudly when the launcher landed on a smaller slice than the config expects
NUM_DEVICES = xr.global_runtime_device_count()  # expect: XLA003
if NUM_DEVICES < config.NUM_CORES:
    warnings.warn(f"config.NUM_CORES={config.NUM_CORES} but only {NUM_DEVICES} devices are attached")


def init_distributed():
    dist.init_process_group(config.DIST_BACKEND, rank=xr.global_ordinal(), world_size=config.NUM_CORES)  # expect: XLA104


def is_main():
    return xr.global_ordinal() == 0
