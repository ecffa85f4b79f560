"""Start one process per TPU chip (accelerate's notebook_launcher, minus the GPU paths)."""
import torch_xla.distributed.xla_multiprocessing as xmp


def launch(function, args=()):
    """`function(index, *args)` runs in every process; the runtime picks the process count."""
    xmp.spawn(function, args=args, start_method="fork")
