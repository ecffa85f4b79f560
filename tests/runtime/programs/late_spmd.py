"""xr.use_spmd() after the runtime started (a device tensor exists): what 2.9 does (it may crash
the process, so it runs alone; the test reads the return code)."""
import torch
import torch_xla
import torch_xla.runtime as xr

from _harness import outcome, report

x = torch.ones(2, device=torch_xla.device())
report("XLA906", bad=outcome(lambda: xr.use_spmd()))
print("computed", (x * 2).cpu().tolist(), flush=True)
print("DONE", flush=True)
