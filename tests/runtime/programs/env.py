"""Environment variables the runtime reads (or ignores): run once per variable set by the test
(``FLAKE8_XLA_RUNTIME_CASE`` names the case in the report)."""
import os

import torch
import torch_xla
import torch_xla.runtime as xr

from _harness import outcome, report

case = os.environ["FLAKE8_XLA_RUNTIME_CASE"]
spmd_from_env = xr.is_spmd()
x = torch.ones(2, device=torch_xla.device()) * 2
ir = torch_xla._XLAC._get_xla_tensors_text([x])
report(case, tensor_dtype=str(x.dtype), computes_in="bf16" if "bf16[2]" in ir else "f32" if "f32[2]" in ir else ir,
       device_type=xr.device_type(), spmd_from_env=spmd_from_env,
       xla_dist=outcome(lambda: __import__("torch_xla.distributed.xla_dist") and "imported"),
       use_spmd=outcome(lambda: xr.use_spmd()) if spmd_from_env else None)
print("DONE", flush=True)
