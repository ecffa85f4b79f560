import torch_xla.distributed.xla_multiprocessing as xmp


def notebook_launcher(function, args=(), num_processes=8):
    """Start `function(index, *args)` once per TPU core (Colab / Kaggle notebooks)."""
    xmp.spawn(function, args=args, nprocs=num_processes)  # expect: XLA001
