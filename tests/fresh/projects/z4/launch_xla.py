"""Spawn train.py's entry point on every TPU core of this host."""
import os
import sys

os.environ.setdefault("PJRT_DEVICE", "TPU")

import torch_xla.distributed.xla_multiprocessing as xmp  # noqa: E402

import train  # noqa: E402


def main():
    args = train.parse_args(sys.argv[1:])
    xmp.spawn(train._mp_entry, args=(args,))


if __name__ == "__main__":
    main()
