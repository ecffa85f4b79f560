import torch.distributed as dist
import torch_xla


def _mp_fn(index):
    dist.init_process_group("xla", init_method="xla://")
    dist.init_process_group(backend='xla', init_method='xla://')
    dist.init_process_group("xla", init_method="xla://")
    dist.init_process_group(
        "xla",
        init_method="xla://",
    )
    dist.init_process_group("xla", init_method='xla://')
    dist.init_process_group("xla", "xla://")


torch_xla.launch(_mp_fn)
