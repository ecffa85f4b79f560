"""The runtime venv itself: torch_xla 2.9 imports and computes on the CPU device (one replica)."""
import pytest

pytestmark = pytest.mark.runtime


def test_torch_xla_computes_on_the_cpu_device(run_program):
    ran = run_program(
        "import torch, torch_xla, torch_xla.runtime as xr\n"
        "t = torch.arange(4, device=torch_xla.device()) * 3\n"
        "torch_xla.sync()\n"
        "print(torch_xla.__version__.split('+')[0], xr.device_type(), xr.world_size(), t.cpu().tolist())\n"
    )
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert ran.stdout.split("\n")[-2] == "2.9.0 CPU 1 [0, 3, 6, 9]"
