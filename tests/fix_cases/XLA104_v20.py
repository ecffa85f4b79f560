# options: --xla-version=2.0
import torch.distributed as dist
import torch_xla.core.xla_model as xm
import torch_xla.distributed.xla_multiprocessing as xmp


def _mp_fn(index):
    dist.init_process_group("xla", rank=xm.get_ordinal(), world_size=xm.xrt_world_size())


xmp.spawn(_mp_fn)
