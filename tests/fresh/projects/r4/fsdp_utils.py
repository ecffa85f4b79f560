"""XLA FSDP wrapping helpers."""
import functools

import torch
import torch_xla
from torch_xla.distributed.fsdp import XlaFullyShardedDataParallel as FSDP
from torch_xla.distributed.fsdp import checkpoint_module
from torch_xla.distributed.fsdp.wrap import transformer_auto_wrap_policy

from model import DecoderBlock

DEVICE = torch_xla.device()  # expect: XLA003


def wrap_model(model, grad_ckpt=True):
    policy = functools.partial(transformer_auto_wrap_policy, transformer_layer_cls={DecoderBlock})
    if grad_ckpt:
        wrapper = lambda m, *args, **kwargs: FSDP(checkpoint_module(m), *args, **kwargs)
    else:
        wrapper = None
    return FSDP(
        model.to(DEVICE),
        compute_dtype=torch.bfloat16,
        auto_wrap_policy=policy,
        auto_wrapper_callable=wrapper,
    )
