"""Launchers on the CPU client (one replica): nprocs, what the launched function sees, the
launching process after the launch, and the runtime started before a launch."""
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.xla_multiprocessing as xmp
import torch_xla.runtime as xr

from _harness import outcome, report


def replica(index, queue, tag):
    queue.put({"tag": tag, "index": index, "world_size": xr.world_size(), "global_ordinal": xr.global_ordinal(),
               "env_rank": outcome(lambda: os.environ["RANK"]),
               "env_set": sorted(k for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK") if k in os.environ)})


def collect(queue):
    got = []
    while not queue.empty():
        got.append(queue.get())
    return sorted(got, key=lambda r: (r["tag"], r["index"]))


if __name__ == "__main__":
    queue = mp.get_context("spawn").Manager().Queue()
    launched = outcome(lambda: torch_xla.launch(replica, args=(queue, "launch")))
    report("XLA001", bad=outcome(lambda: xmp.spawn(replica, args=(queue, "nprocs8"), nprocs=8)),
           good=launched)
    seen_by_launch = collect(queue)
    report("XLA109", replicas=seen_by_launch)
    report("XLA002", bad=outcome(lambda: mp.spawn(replica, args=(queue, "mp.spawn"), nprocs=2)),
           bad_replicas=collect(queue), good=seen_by_launch)
    # the launching process after the launch returned: it is not a replica
    report("XLA005", bad=outcome(lambda: repr(xm.rendezvous("done"))),
           bad_mesh_reduce=outcome(lambda: xm.mesh_reduce("acc", 3.0, sum)),
           bad_barrier=outcome(lambda: dist.barrier()))
    # now the runtime is started in this process: a second launch refuses
    torch.ones(2, device=torch_xla.device())
    report("XLA003", bad=outcome(lambda: torch_xla.launch(replica, args=(queue, "late"))), good=launched)
    print("DONE", flush=True)
