import os

import torch

from .utils import is_torch_xla_available


def notebook_launcher(function, args=(), num_processes=None):
    """Run `function(index, *args)` once per accelerator of this machine."""
    if is_torch_xla_available() and os.environ.get("PJRT_DEVICE", "TPU") == "TPU":
        import torch_xla.distributed.xla_multiprocessing as xmp

        xmp.spawn(function, args=args, nprocs=num_processes, start_method="fork")  # expect: XLA001
    elif torch.cuda.is_available():
        import torch.multiprocessing as mp

        nprocs = num_processes or torch.cuda.device_count()
        mp.start_processes(function, args=args, nprocs=nprocs, start_method="fork")
    else:
        function(0, *args)
