import torch_xla
from torch.nn.parallel import DistributedDataParallel as DDP


def wrap(model, rank, other):
    a = DDP(model, gradient_as_bucket_view=True)
    b = DDP(model, gradient_as_bucket_view=True, broadcast_buffers=False)
    c = DDP(model, gradient_as_bucket_view=True)  # both rules, one node
    d = DDP(model, gradient_as_bucket_view=True)
    e = DDP(
        model,  # the module
        broadcast_buffers=False,
        gradient_as_bucket_view=True,
    )
    f = DDP(model,
            broadcast_buffers=False,
            gradient_as_bucket_view=True)
    g = DDP(model, device_ids=None, gradient_as_bucket_view=True)
    h = DDP(model)  # noqa: XLA101
    return a, b, c, d, e, f, g, h
