"""Checkpoints written by a background thread so the TPU keeps training."""
import os
import threading

import torch
import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr


def _to_cpu(obj):
    if isinstance(obj, torch.Tensor):
        return obj.detach().cpu()
    if isinstance(obj, dict):
        return {k: _to_cpu(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_to_cpu(v) for v in obj)
    return obj


class AsyncCheckpointer:
    def __init__(self, out_dir):
        self.out_dir = out_dir
        self._thread = None
        os.makedirs(out_dir, exist_ok=True)

    def _write(self, state, path):
        tmp = path + ".tmp"
        torch.save(state, tmp)
        os.replace(tmp, path)

    def wait(self):
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def save(self, step, model, optimizer):
        # every replica copies its (identical) state to the host; only the first one writes
        cpu_state = _to_cpu({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": step})
        self.wait()
        if xr.global_ordinal() == 0:
            path = os.path.join(self.out_dir, f"ckpt_{step:07d}.pt")
            self._thread = threading.Thread(target=self._write, args=(cpu_state, path), daemon=True)
            self._thread.start()

    def save_final(self, model, path):
        self.wait()
        xm.wait_device_ops()
        if xr.global_ordinal() == 0:
            torch.save(model.state_dict(), path)  # expect: XLA601
