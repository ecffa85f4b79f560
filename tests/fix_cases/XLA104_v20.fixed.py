# options: --xla-version=2.0
import torch.distributed as dist
import torch_xla.distributed.xla_multiprocessing as xmp
import torch_xla.experimental.pjrt_backend  # noqa: F401


def _mp_fn(index):
    dist.init_process_group("xla", init_method="pjrt://")


xmp.spawn(_mp_fn)
