# options: --unsafe-fixes --xla-version=2.4

import torch.distributed as dist
import torch_xla.distributed.xla_multiprocessing as xmp


def _mp_fn(index):
    dist.init_process_group(backend="xla", init_method="xla://")


if __name__ == "__main__":
    xmp.spawn(_mp_fn, args=())
