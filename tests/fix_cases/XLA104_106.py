import torch.distributed as dist
import torch_xla


def _mp_fn(index):
    dist.init_process_group("xla", rank=index, world_size=8)
    dist.init_process_group(backend='xla', rank=index)
    dist.init_process_group("xla", init_method="env://")
    dist.init_process_group(
        "xla",
        world_size=8,
    )
    dist.init_process_group("xla", init_method='pjrt://')
    dist.init_process_group("xla", "pjrt://")


torch_xla.launch(_mp_fn)
