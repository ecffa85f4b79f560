import torch
import torch.distributed as dist


def is_master(args):
    return args.distributed_rank == 0


def distributed_main(i, main, args):
    args.device_id = i
    if args.tpu:
        import torch_xla.runtime as xr
        args.distributed_rank = xr.global_ordinal()
        args.distributed_world_size = xr.world_size()
    else:
        args.distributed_rank = args.distributed_rank + i
        dist.init_process_group("nccl", init_method=args.distributed_init_method,
                                world_size=args.distributed_world_size, rank=args.distributed_rank)
        torch.cuda.set_device(args.device_id)
    main(args)


def call_main(args, main):
    if args.tpu:
        import torch_xla.distributed.xla_multiprocessing as xmp
        xmp.spawn(distributed_main, args=(main, args), nprocs=8)  # expect: XLA001
    elif args.distributed_world_size > 1:
        torch.multiprocessing.spawn(distributed_main, args=(main, args),
                                    nprocs=args.distributed_world_size)
    else:
        main(args)
