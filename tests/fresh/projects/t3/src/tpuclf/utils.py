import os
import sys

import torch_xla.runtime as xr


def world_info():
    return xr.global_ordinal(), xr.world_size()


def cache_dir():
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))  # expect: XLA109
    path = os.path.join("/tmp/tpuclf_cache", f"worker{local_rank}")
    os.makedirs(path, exist_ok=True)
    return path


def describe_topology():
    print(f"TPU chips: {xr.global_runtime_device_count()}, hosts: {xr.process_count()}", flush=True)


class StepLogger:
    def __init__(self, rank, every=100, stream=sys.stdout):
        self.rank = rank
        self.every = every
        self.stream = stream

    def log_step(self, step, loss):
        if step % self.every == 0:
            self._write(step, loss)

    def _write(self, step, loss):
        self.stream.write(f"[rank {self.rank}] step {step} loss {loss:.4f}\n")  # expect: XLA507

    def epoch_end(self, epoch, loss, train_acc, eval_acc):
        if self.rank == 0:
            print(f"epoch {epoch}: loss {loss:.4f} train acc {train_acc:.4f} eval acc {eval_acc:.4f}", flush=True)
