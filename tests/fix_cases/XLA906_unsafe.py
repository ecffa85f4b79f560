# options: --unsafe-fixes
# remains: XLA906
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr


def main():
    xm.set_rng_state(42)
    device = torch_xla.device()
    print("setting up")
    xr.use_spmd()  # SPMD for the whole run
    return device


def enable():
    xr.use_spmd()


def caller():
    device = torch_xla.device()
    enable()
    return device
