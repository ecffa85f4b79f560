"""Process environment and a hardware banner for the logs."""
import os

import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr


def configure_env(args):
    os.environ.setdefault("LIBTPU_INIT_ARGS", "--xla_tpu_enable_async_collective_fusion=true")
    dev = torch_xla.device()
    print(f"host {xr.process_index()}/{xr.process_count()}: {xm.xla_device_hw(dev)}, "
          f"batch {args.per_device_batch}/device, seq len {args.seq_len}")
