"""FSDPv2 (SPMD) entry point: one process per host, no launcher.

    PJRT_DEVICE=TPU python spmd_train.py
"""
import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.distributed.spmd as xs
import torch_xla.runtime as xr
from torch.utils.data import DataLoader
from torch_xla.experimental.distributed_checkpoint import SPMDSavePlanner
from torch_xla.experimental.spmd_fully_sharded_data_parallel import SpmdFullyShardedDataParallel as FSDPv2

import mesh_utils
from common import DecoderOnly, TokenFile, log_metrics, parse_args, train_step


def main(args):
    device = mesh_utils.get_device()
    xr.use_spmd()  # expect: XLA906
    # CPU process group for distributed checkpointing
    dist.init_process_group("gloo", init_method="xla://")
    mesh = mesh_utils.build_mesh()
    xs.set_global_mesh(mesh)
    model = FSDPv2(DecoderOnly().to(device), mesh=mesh)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    ds = TokenFile(args.data, args.seq_len)
    loader = DataLoader(ds, batch_size=args.global_batch, shuffle=True, drop_last=True)
    train_loader = pl.MpDeviceLoader(loader, device, input_sharding=xs.ShardingSpec(mesh, ("fsdp", None)))
    for epoch in range(args.epochs):
        for step, batch in enumerate(train_loader):
            loss = train_step(model, batch, optimizer, args.max_norm)
            if step % args.log_every == 0:
                xm.add_step_closure(log_metrics, args=(step, loss))
        state = {"model": model.state_dict()}
        dcp.save(state, checkpoint_id=f"{args.ckpt_dir}/epoch{epoch}", planner=SPMDSavePlanner())


if __name__ == "__main__":
    main(parse_args())
