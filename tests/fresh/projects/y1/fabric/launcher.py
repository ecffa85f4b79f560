"""Starts one process per TPU chip on behalf of the XLA strategy."""
import torch_xla.distributed.xla_multiprocessing as xmp


class XLALauncher:
    def __init__(self, strategy, start_method="fork"):
        self._strategy = strategy
        self._start_method = start_method

    @property
    def is_interactive_compatible(self):
        return self._start_method == "fork"

    def launch(self, function, *args):
        nprocs = self._strategy.num_processes
        xmp.spawn(function, args=(self._strategy, *args), nprocs=nprocs, start_method=self._start_method)  # expect: XLA001
