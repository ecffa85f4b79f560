"""Runtime set-up that has to happen inside each TPU process."""
import torch_xla.runtime as xr


def describe_hardware():
    return f"{xr.device_type()} x {xr.global_runtime_device_count()}"


def setup_runtime(cfg):
    if cfg.compilation_cache:
        xr.initialize_cache(cfg.compilation_cache, readonly=False)  # expect: XLA901
