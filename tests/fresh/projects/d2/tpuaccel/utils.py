"""Helpers shared by the Accelerator (no torch_xla import, so they can be unit-tested on a laptop)."""
import contextlib
import os
import shutil

import torch


def autocast_context(mixed_precision):
    if mixed_precision == "bf16":
        return torch.autocast(device_type="cuda", dtype=torch.bfloat16)  # expect: XLA701
    return contextlib.nullcontext()


def copy_to_local(src, dst_dir):
    os.makedirs(dst_dir, exist_ok=True)
    dst = os.path.join(dst_dir, os.path.basename(src))
    if not os.path.exists(dst):
        shutil.copyfile(src, dst)
    return dst
