"""Process launchers. The strategy owns one and hands it the function to run."""
import torch_xla.distributed.xla_multiprocessing as xmp


class XLALauncher:
    def __init__(self, strategy, start_method="fork"):
        self._strategy = strategy
        self._start_method = start_method

    @property
    def is_interactive_compatible(self):
        return self._start_method == "fork"

    def launch(self, function, *args, **kwargs):
        nprocs = self._strategy.num_processes
        xmp.spawn(self._wrapping_function, args=(function, args, kwargs), nprocs=nprocs, start_method=self._start_method)  # expect: XLA001

    def _wrapping_function(self, process_idx, function, args, kwargs):
        self._strategy.local_rank_hint = process_idx
        results = function(*args, **kwargs)
        return results
