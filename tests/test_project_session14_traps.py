"""Correct code session 14's attack on project mode found reported (issue 28): each a trap
that must stay silent, with the shape that must still be reported beside it.

- A project's launch wrapper is matched by name (``spawn``, ``run``, ``launch``), but not on
  a library's call of the same name: ``mp.spawn(worker)`` (torch.multiprocessing), absl's
  ``app.run(main)``, ``fabric.launch(train)`` on a Lightning ``Fabric``; nor on an object a
  project factory builds of another class (``get_backend("cuda").spawn(...)``).
- A helper called only in a branch XLA never takes (``else:`` of ``if HAS_XLA:``, ``if
  cfg.device == "cuda":``) is not followed from launched code.
- ``torch_xla.launch(train_worker, args=("tpu",))`` passes its constant to an imported worker,
  whose ``get_backend(name)`` builds only the TPU backend.
- XLA003: a module-level ``lambda`` body or generator element does not run at import, and
  ``if "__main__" == __name__:`` is a main guard.
- XLA109: ``os.environ.get("LOCAL_RANK", xr.local_ordinal())`` falls back to torch_xla's answer.
"""

from __future__ import annotations

import pytest

from test_project_mode import lint_all, write

pytestmark = pytest.mark.usefixtures("fresh_project_cache")

TPU_LAUNCH = '''\
import torch_xla.distributed.xla_multiprocessing as xmp


def spawn(fn, *args):
    xmp.spawn(fn, args=args)


def run(fn, *args):
    xmp.spawn(fn, args=args)


def launch(fn, *args):
    xmp.spawn(fn, args=args)
'''

GPU_WORKER = '''\
import torch
import torch.distributed as dist


def worker(rank):
    dist.init_process_group("nccl", rank=rank, world_size=8)
    torch.cuda.set_device(rank)
    model = torch.nn.Linear(4, 2).cuda()
    print(model(torch.zeros(2, 4).cuda()).sum().item())
'''


@pytest.mark.parametrize("script", [
    "import torch.multiprocessing as mp\nimport tpu_launch\n{worker}\n\nif __name__ == '__main__':\n"
    "    mp.spawn(worker, nprocs=8)\n",
    "from absl import app\nimport tpu_launch\n{worker}\n\ndef main(argv):\n    worker(0)\n\n\n"
    "if __name__ == '__main__':\n    app.run(main)\n",
    "from lightning.fabric import Fabric\nimport tpu_launch\n{worker}\n\nif __name__ == '__main__':\n"
    "    fabric = Fabric(accelerator='cuda')\n    fabric.launch(worker)\n",
])
def test_a_library_call_named_like_a_project_wrapper_launches_nothing(tmp_path, script):
    write(tmp_path, {"pyproject.toml": "", "tpu_launch.py": TPU_LAUNCH,
                     "gpu_train.py": script.format(worker=GPU_WORKER)})
    assert lint_all(tmp_path) == set()


def test_the_project_wrapper_itself_still_launches(tmp_path):
    script = "import tpu_launch\n{worker}\n\nif __name__ == '__main__':\n    tpu_launch.spawn(worker)\n"
    write(tmp_path, {"pyproject.toml": "", "tpu_launch.py": TPU_LAUNCH,
                     "tpu_train.py": script.format(worker=GPU_WORKER)})
    found = lint_all(tmp_path)
    assert ("tpu_train.py", 7, "XLA103") in found and ("tpu_train.py", 8, "XLA401") in found


BACKENDS = '''\
def get_backend(name):
    if name == "cuda":
        from .cuda import CudaBackend
        return CudaBackend()
    from .tpu import TpuBackend
    return TpuBackend()
'''

TPU_BACKEND = '''\
import torch_xla


class TpuBackend:
    def spawn(self, fn):
        torch_xla.launch(fn, args=(self,))

    def device(self):
        return torch_xla.device()
'''

CUDA_BACKEND = '''\
import torch
import torch.multiprocessing as mp


class CudaBackend:
    def spawn(self, fn):
        mp.spawn(fn, args=(self,), nprocs=torch.cuda.device_count())

    def device(self):
        return torch.device("cuda")
'''

ENGINE = '''\
import torch


def train_worker(index, backend):
    model = torch.nn.Linear(4, 2).to(backend.device())
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x in [torch.zeros(2, 4)]:
        loss = model(x.to(backend.device())).sum()
        loss.backward()
        opt.step()
        print(loss.item())
'''


def test_a_factory_built_backend_of_another_class_does_not_launch_xla(tmp_path):
    run = "from backends import get_backend\nfrom engine import train_worker\n\n" \
          "if __name__ == '__main__':\n    get_backend('cuda').spawn(train_worker)\n"
    write(tmp_path, {"pyproject.toml": "", "backends/__init__.py": BACKENDS, "backends/tpu.py": TPU_BACKEND,
                     "backends/cuda.py": CUDA_BACKEND, "engine.py": ENGINE, "run_gpu.py": run})
    assert lint_all(tmp_path) == set()
    # the TPU one does: the worker's per-step .item() is XLA501
    write(tmp_path, {"run_gpu.py": run.replace("get_backend('cuda')", "get_backend('tpu')")})
    from flake8_xla import project
    project.clear_cache()
    assert ("engine.py", 11, "XLA501") in lint_all(tmp_path)


def test_a_launch_argument_picks_the_factory_branch_in_an_imported_worker(tmp_path):
    worker = ENGINE.replace("def train_worker(index, backend):",
                            "from backends import get_backend\n\n\ndef train_worker(index, name):\n"
                            "    backend = get_backend(name)")
    run = "import torch_xla\nfrom engine import train_worker\n\n" \
          "if __name__ == '__main__':\n    torch_xla.launch(train_worker, args=('tpu',))\n"
    cuda = CUDA_BACKEND + "\n    def setup(self):\n        torch.cuda.set_device(0)\n"
    write(tmp_path, {"pyproject.toml": "", "backends/__init__.py": BACKENDS, "backends/tpu.py": TPU_BACKEND,
                     "backends/cuda.py": cuda, "engine.py": worker, "run_tpu.py": run})
    found = lint_all(tmp_path)
    assert not {f for f in found if f[0].startswith("backends/cuda")}, found
    assert ("engine.py", 15, "XLA501") in found


CUDA_SETUP = '''\
import torch


def setup_cuda():
    torch.cuda.set_device(0)
    torch.backends.cudnn.benchmark = True
'''


@pytest.mark.parametrize("branch", [
    "    if HAS_XLA:\n        device = torch_xla.device()\n    else:\n        setup_cuda()\n",
    "    if not HAS_XLA:\n        setup_cuda()\n",
    "    if cfg.device == 'cuda':\n        setup_cuda()\n",
])
def test_a_helper_called_in_an_xla_off_branch_is_not_launched_code(tmp_path, branch):
    train = ("import torch\ntry:\n    import torch_xla\n    HAS_XLA = True\nexcept ImportError:\n    HAS_XLA = False\n"
             "from cuda_setup import setup_cuda\n\n\ndef worker(index, cfg):\n" + branch +
             "\n\nif __name__ == '__main__':\n    torch_xla.launch(worker, args=(None,))\n")
    write(tmp_path, {"pyproject.toml": "", "cuda_setup.py": CUDA_SETUP, "train.py": train})
    assert {f for f in lint_all(tmp_path) if f[0] == "cuda_setup.py"} == set()


def test_the_same_helper_called_in_the_xla_branch_is(tmp_path):
    train = ("import torch\nimport torch_xla\nfrom cuda_setup import setup_cuda\n\n\ndef worker(index):\n"
             "    setup_cuda()\n\n\nif __name__ == '__main__':\n    torch_xla.launch(worker)\n")
    write(tmp_path, {"pyproject.toml": "", "cuda_setup.py": CUDA_SETUP, "train.py": train})
    assert ("cuda_setup.py", 5, "XLA401") in lint_all(tmp_path)


SETTINGS = '''\
import atexit

import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr

ordinal = lambda: xr.global_ordinal()  # noqa: E731
atexit.register(lambda: xm.master_print("bye"))
DEVICES = (torch_xla.device() for _ in range(1))

if "__main__" == __name__:
    print(xr.global_ordinal())
'''

MAIN = '''\
import torch_xla

import settings


def _mp_fn(index):
    print(settings.ordinal())


if __name__ == "__main__":
    torch_xla.launch(_mp_fn)
'''


def test_deferred_module_level_code_does_not_run_at_import(tmp_path):
    write(tmp_path, {"pyproject.toml": "", "settings.py": SETTINGS, "main.py": MAIN})
    assert lint_all(tmp_path) == set()
    write(tmp_path, {"settings.py": SETTINGS + "RANK = xr.global_ordinal()\n"})
    from flake8_xla import project
    project.clear_cache()
    assert lint_all(tmp_path) == {("settings.py", 13, "XLA003")}


def test_a_rank_read_that_falls_back_to_torch_xla(tmp_path):
    dist = ("import os\nimport torch_xla\nimport torch_xla.runtime as xr\n\n\ndef _mp_fn(index):\n"
            "    local = int(os.environ.get('LOCAL_RANK', xr.local_ordinal()))\n"
            "    rank = int(os.environ.get('RANK', 0))\n    print(local, rank)\n\n\n"
            "if __name__ == '__main__':\n    torch_xla.launch(_mp_fn)\n")
    write(tmp_path, {"pyproject.toml": "", "dist.py": dist})
    assert lint_all(tmp_path) == {("dist.py", 8, "XLA109")}


MIXINS = '''\
import torch_xla.core.xla_model as xm


class XlaCheckpointMixin:
    def save(self, path):
        xm.save(self.model.state_dict(), path)
'''

RUNNERS = '''\
import torch
import torch_xla

from mixins import XlaCheckpointMixin


class BaseRunner:
    def __init__(self):
        self.model = torch.nn.Linear(8, 2).to(torch_xla.device())

    def save(self, path):
        torch.save(self.model.state_dict(), path)

    def fit(self):
        self.save("last.pt")


class MixinRunner(XlaCheckpointMixin, BaseRunner):
    pass
'''

RUN = '''\
import torch_xla

from runners import MixinRunner


def _mp_fn(index):
    MixinRunner().fit()


if __name__ == "__main__":
    torch_xla.launch(_mp_fn)
'''


def test_a_mixin_listed_first_overrides_the_base(tmp_path):
    # MixinRunner's MRO runs the mixin's xm.save: the base's torch.save never runs
    write(tmp_path, {"pyproject.toml": "", "mixins.py": MIXINS, "runners.py": RUNNERS, "run.py": RUN})
    assert lint_all(tmp_path) == set()
    write(tmp_path, {"runners.py": RUNNERS.replace("MixinRunner(XlaCheckpointMixin, BaseRunner)",
                                                   "MixinRunner(BaseRunner, XlaCheckpointMixin)")})
    from flake8_xla import project
    project.clear_cache()
    assert lint_all(tmp_path) == {("runners.py", 12, "XLA601")}


OPTIM = '''\
import torch


def build_optimizer(model, lr):
    return torch.optim.AdamW(model.parameters(), lr=lr)
'''

REBUILT = '''\
import torch
import torch_xla
import torch_xla.core.xla_model as xm

from optim_utils import build_optimizer


def _mp_fn(index, loader):
    device = torch_xla.device()
    model = torch.nn.Linear(4, 2)
    optimizer = build_optimizer(model, 1e-3)
    model.to(device)
    optimizer = build_optimizer(model, 1e-3)
    for x in loader:
        model(x).sum().backward()
        xm.optimizer_step(optimizer)


if __name__ == "__main__":
    torch_xla.launch(_mp_fn, args=(None,))
'''


def test_an_optimizer_rebuilt_after_the_move_before_any_use(tmp_path):
    write(tmp_path, {"pyproject.toml": "", "optim_utils.py": OPTIM, "train.py": REBUILT})
    assert lint_all(tmp_path) == set()
    # used once before it is rebuilt: the first optimizer steps the old parameters
    write(tmp_path, {"train.py": REBUILT.replace("    model.to(device)\n", "    model.to(device)\n    optimizer.zero_grad()\n")})
    from flake8_xla import project
    project.clear_cache()
    assert lint_all(tmp_path) == {("optim_utils.py", 5, "XLA405")}


PREP = '''\
import torch


def encode_shard(index, paths):
    torch.save(torch.tensor([len(p) for p in paths]), f"shard{index}.pt")
'''

SPAWNS = '''\
import torch.multiprocessing as mp
import torch_xla

from prep import encode_shard


def main(paths):
    mp.spawn(encode_shard, args=(paths,), nprocs=4)
    print(torch_xla.device())


if __name__ == "__main__":
    main(["a", "b"])
'''


def test_a_cpu_pool_of_another_modules_function(tmp_path):
    write(tmp_path, {"pyproject.toml": "", "prep.py": PREP, "train.py": SPAWNS})
    assert lint_all(tmp_path) == set()
    # a worker that uses the XLA device is XLA002 (it gets no ordinal, no topology)
    write(tmp_path, {"prep.py": PREP.replace("import torch\n", "import torch\nimport torch_xla\n")
                     .replace("    torch.save(", "    print(torch_xla.device())\n    torch.save(")})
    from flake8_xla import project
    project.clear_cache()
    assert ("train.py", 8, "XLA002") in lint_all(tmp_path)


def test_an_alias_overrides_the_base_method(tmp_path):
    # class AliasRunner(BaseRunner): save = _xla_save -- the base's torch.save never runs
    runners = RUNNERS.replace("from mixins import XlaCheckpointMixin\n",
                              "from mixins import XlaCheckpointMixin\n\n\ndef _xla_save(self, path):\n"
                              "    import torch_xla.core.xla_model as xm\n\n    xm.save(self.model.state_dict(), path)\n") \
        .replace("class MixinRunner(XlaCheckpointMixin, BaseRunner):\n    pass\n",
                 "class MixinRunner(BaseRunner):\n    save = _xla_save\n")
    write(tmp_path, {"pyproject.toml": "", "mixins.py": MIXINS, "runners.py": runners, "run.py": RUN})
    assert lint_all(tmp_path) == set()
