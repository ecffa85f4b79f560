"""Process launch and rank helpers (TPU: one process per chip)."""
import logging

import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr

logger = logging.getLogger(__name__)


def get_global_rank():
    return xm.get_ordinal()  # expect: XLA802


def get_rank():
    return xr.global_ordinal()


def get_world_size():
    return xr.world_size()


def is_master():
    return get_rank() == 0


def barrier(tag):
    xm.rendezvous(tag)  # expect: XLA506


def distributed_main(i, main, cfg):
    cfg.device_id = i
    logger.info("started worker %d (global rank %d)", i, get_global_rank())
    main(cfg)


def call_main(cfg, main):
    torch_xla.launch(distributed_main, args=(main, cfg))
