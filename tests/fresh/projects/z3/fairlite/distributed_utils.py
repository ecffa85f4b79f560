"""Process launch and collectives, shared by the GPU and the TPU paths."""
import torch
import torch.distributed as dist


def is_master(cfg):
    return cfg.distributed_rank == 0


def distributed_init(cfg):
    if cfg.tpu:
        import torch_xla.core.xla_model as xm

        rank = xm.get_ordinal()  # expect: XLA802
        dist.init_process_group("xla", rank=rank, world_size=cfg.distributed_world_size)  # expect: XLA104
        xm.rendezvous("distributed_init")
    else:
        dist.init_process_group(backend="nccl", init_method=cfg.init_method,
                                world_size=cfg.distributed_world_size, rank=cfg.distributed_rank)
        rank = dist.get_rank()
    return rank


def distributed_main(i, main, cfg):
    cfg.device_id = i
    if torch.cuda.is_available() and not cfg.cpu and not cfg.tpu:
        torch.cuda.set_device(cfg.device_id)
    cfg.distributed_rank = distributed_init(cfg)
    main(cfg)


def call_main(cfg, main):
    if cfg.tpu:
        import torch_xla.distributed.xla_multiprocessing as xmp

        torch.multiprocessing.set_sharing_strategy("file_system")
        xmp.spawn(fn=distributed_main, args=(main, cfg), nprocs=min(cfg.distributed_world_size, 8))  # expect: XLA001
    elif cfg.distributed_world_size > 1:
        nprocs = min(torch.cuda.device_count(), cfg.distributed_world_size)
        torch.multiprocessing.spawn(fn=distributed_main, args=(main, cfg), nprocs=nprocs)
    else:
        main(cfg)


def all_reduce_grads(params, cfg):
    grads = [p.grad for p in params if p.grad is not None]
    if cfg.tpu:
        import torch_xla.core.xla_model as xm
        import torch_xla.runtime as xr

        xm.all_reduce(xm.REDUCE_SUM, grads, scale=1.0 / xr.world_size())
    elif cfg.distributed_world_size > 1:
        for g in grads:
            dist.all_reduce(g)
            g.div_(cfg.distributed_world_size)
