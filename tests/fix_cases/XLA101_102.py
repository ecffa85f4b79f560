import torch_xla
from torch.nn.parallel import DistributedDataParallel as DDP


def wrap(model, rank, other):
    a = DDP(model)
    b = DDP(model, gradient_as_bucket_view=False, broadcast_buffers=False)
    c = DDP(model, device_ids=[rank], output_device=rank)  # both rules, one node
    d = DDP(model, [rank], gradient_as_bucket_view=True)
    e = DDP(
        model,  # the module
        device_ids=[rank],
        broadcast_buffers=False,
    )
    f = DDP(model,
            broadcast_buffers=False)
    g = DDP(model, device_ids=None, gradient_as_bucket_view=True)
    h = DDP(model)  # noqa: XLA101
    return a, b, c, d, e, f, g, h
