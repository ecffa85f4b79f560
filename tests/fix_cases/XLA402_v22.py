# options: --xla-version=2.2
import torch_xla.core.xla_model as xm
import torch_xla.distributed.xla_multiprocessing as xmp


def _mp_fn(index, model):
    device = xm.xla_device(index)
    return model.to(index), device


xmp.spawn(_mp_fn, args=(None,))
