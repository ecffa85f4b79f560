"""XLA1: torch.distributed and DistributedDataParallel on XLA."""

from __future__ import annotations

import ast

from ..model import UNKNOWN
from ..registry import ANYWHERE, Rule, rule
from ._common import at_least, device_call, init_method, render, runtime_api

DDP = "torch.nn.parallel.DistributedDataParallel"
INIT_PG = "torch.distributed.init_process_group"
MASTER_VARS = ("MASTER_ADDR", "MASTER_PORT")
RANK_VARS = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE")


@rule
class DdpWithoutBucketView(Rule):
    """## What it does
    Flags `DistributedDataParallel(...)` (every spelling: `DDP`, `nn.parallel.DistributedDataParallel`,
    `torch.nn.parallel.distributed.DistributedDataParallel`, ...) in XLA code without
    `gradient_as_bucket_view=True`.

    ## Why is this bad?
    The PyTorch/XLA DDP guide says to pass `gradient_as_bucket_view=True`. Up to torch_xla
    2.5 the docs call it *required* for DDP on XLA ("needs to be enforced"); from 2.6
    (after #8521 fixed DDP with the flag) it is the documented form and saves a copy of
    every gradient.

    ## Known problems
    A `**kwargs` splat or a variable that cannot be seen is not reported. Code that calls
    `detach_()` on gradients cannot use the flag; silence the line with `# noqa: XLA101`.

    ## Example
    ```python
    ddp_model = DDP(model)
    ```

    ## Use instead
    ```python
    ddp_model = DDP(model, gradient_as_bucket_view=True)
    ```

    ## References
    - torch_xla `docs/source/perf/ddp.md` (`docs/ddp.md` up to 2.5) "Wrap the model with DDP"
    - torch_xla `README.md` DDP diff; `test/test_train_mp_imagenet.py` comment on `detach_()`
    - Required 1.13-2.5; recommended (memory) 2.6-2.9.
    """

    code = "XLA101"
    name = "ddp-without-gradient-as-bucket-view"
    message = "DDP on XLA without gradient_as_bucket_view=True"
    fix = "pass gradient_as_bucket_view=True"
    severity = "E"
    versions = "1.13+ (required up to 2.5, recommended after)"
    reported_at = 'the `DistributedDataParallel(...)` call'
    fix_applicability = "safe"
    bad = [
        "import torch_xla\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n"
        "def f(model):\n    return DDP(model)\n",
        "import torch\nimport torch_xla\n"
        "def f(model):\n    return torch.nn.parallel.DistributedDataParallel(model, gradient_as_bucket_view=False)\n",
    ]
    good = [
        "import torch_xla\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n"
        "def f(model, **kw):\n    DDP(model, gradient_as_bucket_view=True)\n    DDP(model, **kw)\n",
        "from torch.nn.parallel import DistributedDataParallel as DDP\n"
        "def f(model):\n    return DDP(model)  # no torch_xla: not XLA code\n",
    ]

    def check(self, model):
        # up to 2.5 the docs call the flag required; from 2.6 it saves a copy of every gradient
        message = self.message + ("" if at_least(self.settings, "2.6") else " (required up to torch_xla 2.5)")
        for call, ctx in model.calls_to(DDP):
            if not model.in_xla_code(ctx):
                continue
            flag = model.kwarg(call, "gradient_as_bucket_view", 9)
            if flag is UNKNOWN:
                continue
            if flag is not None:
                value = model.const(flag, ctx)
                if value is UNKNOWN or value is True:
                    continue
            yield self.finding(call, message)


@rule
class DdpDeviceIdsOnXla(Rule):
    """## What it does
    Flags `device_ids=` / `output_device=` (or `device_ids` as the second positional
    argument) on `DistributedDataParallel(...)` in XLA code.

    ## Why is this bad?
    Both are CUDA arguments. Every PJRT process sees its own chip as `xla:0`, so
    `device_ids=[rank]` names a device that does not exist on every rank but 0; with a
    CPU-resident module DDP raises `ValueError: DistributedDataParallel device_ids and
    output_device arguments only work with single-device/multiple-device GPU modules`.

    ## Example
    ```python
    model = model.to(rank)
    ddp_model = DDP(model, device_ids=[rank])
    ```

    ## Use instead
    ```python
    model.to(torch_xla.device())
    ddp_model = DDP(model, gradient_as_bucket_view=True)
    ```

    ## References
    - torch_xla `README.md` DDP diff (`- ddp_model = DDP(model, device_ids=[rank])`)
    - torch_xla `docs/source/learn/pytorch-on-xla-devices.md` (each process sees `xla:0`)
    - Applies to torch_xla 1.13-2.9.
    """

    code = "XLA102"
    name = "ddp-device-ids-on-xla"
    message = "DDP on XLA given device_ids/output_device (CUDA-only)"
    fix = "drop them and call model.to(torch_xla.device())"
    severity = "E"
    versions = "1.13+"
    reported_at = 'the `DistributedDataParallel(...)` call'
    fix_applicability = "safe"
    bad = [
        "import torch_xla\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n"
        "def f(model, rank):\n    return DDP(model, device_ids=[rank], gradient_as_bucket_view=True)\n",
        "import torch_xla\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n"
        "def f(model, rank):\n    return DDP(model, [rank], gradient_as_bucket_view=True)\n",
    ]
    good = [
        "import torch_xla\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n"
        "def f(model):\n    return DDP(model, device_ids=None, gradient_as_bucket_view=True)\n",
    ]

    def check(self, model):
        fix = f"drop them and call model.to({device_call(self.settings)})"
        for call, ctx in model.calls_to(DDP):
            if not model.in_xla_code(ctx):
                continue
            for name, pos in (("device_ids", 1), ("output_device", 2)):
                arg = model.kwarg(call, name, pos)
                if arg is None or arg is UNKNOWN or model.const(arg, ctx) is None or model.may_be_none(arg, ctx):
                    continue  # None on some path: the CUDA branch picks the ids, the XLA one passes None
                yield self.finding(call, fix=fix)
                break


def _backend(model, call, ctx):
    arg = model.kwarg(call, "backend", 0)
    if arg is None:
        return None
    value = model.const(arg, ctx)
    if isinstance(value, str):
        return value.lower()
    q = model.qualname(arg, ctx) if isinstance(arg, ast.AST) else None
    if q is not None and q.startswith("torch.distributed.Backend."):  # dist.Backend.GLOO
        return q.rsplit(".", 1)[1].lower()
    return UNKNOWN


def _rank_argument_ids(model) -> set[int]:
    """ids of the values of ``rank=`` arguments (also inside ``int(...)``): a rank among all
    replicas (``DistributedSampler(..., rank=...)``, ``init_process_group(..., rank=...)``)."""
    out = set()
    for call, _ in model.keyword_calls("rank"):
        for kw in call.keywords:
            if kw.arg == "rank":
                value = kw.value
                out.add(id(value))
                if type(value) is ast.Call and type(value.func) is ast.Name and value.func.id == "int" and value.args:
                    out.add(id(value.args[0]))
    return out


def _guarded_by_env_test(model, ctx, keys) -> bool:
    """Code in the body of ``if "RANK" in os.environ:`` (or ``os.environ.get("RANK")``);
    memoised per branch frame (linear after N early returns)."""

    def env_test(frame) -> bool:
        if not isinstance(frame, tuple) or not frame[1]:
            return False
        test = frame[0]
        operands = test.values if type(test) is ast.BoolOp and type(test.op) is ast.And else [test]
        for t in operands:
            if type(t) is ast.Compare and len(t.ops) == 1 and type(t.ops[0]) is ast.In \
                    and model.qualname(t.comparators[0], ctx) == "os.environ" and model.const(t.left, ctx) in keys:
                return True
            if type(t) is ast.Call and model.call_name(t, ctx) in ("os.environ.get", "os.getenv") and t.args \
                    and model.const(t.args[0], ctx) in keys:
                return True
        return False

    return model.any_branch(ctx, ("env_guard", keys), env_test)


def _init_method(model, call, ctx):
    arg = model.kwarg(call, "init_method", 1)
    if arg is None:
        return None
    value = model.const(arg, ctx)
    return value if isinstance(value, str) else UNKNOWN


def _explicit_env_init(model) -> bool:
    """An ``xla`` process group set up on purpose with ``init_method="env://"``."""
    for call, ctx in model.calls_to(INIT_PG):
        if _init_method(model, call, ctx) == "env://" and _backend(model, call, ctx) == "xla":
            return True
    return False


#: what else reads MASTER_ADDR / MASTER_PORT: RPC's and a TCP store's own env:// rendezvous
ENV_RENDEZVOUS = ("torch.distributed.rpc.", "torch.distributed.TCPStore")


def _other_env_rendezvous(model) -> bool:
    """The module starts RPC (``rpc.init_rpc``) or a ``TCPStore``, which read ``MASTER_*``."""
    return any(q.startswith(ENV_RENDEZVOUS) for q in model.call_index())


@rule
class NonXlaProcessGroup(Rule):
    """## What it does
    Flags `init_process_group` with the `gloo`, `nccl` or `mpi` backend in code started
    by the XLA launcher, and assignments of `MASTER_ADDR` / `MASTER_PORT` in
    `os.environ` (every spelling) in XLA code.

    ## Why is this bad?
    `gloo` and `nccl` cannot reduce XLA tensors (`ProcessGroupGloo::allgather: invalid
    tensor type ... device=xla:0`; there is no NCCL on a TPU host). The `xla` backend with
    the `xla://` init method takes rank, world size and the master address from the
    runtime; a leftover `MASTER_ADDR='localhost'` overrides the TPU master discovery on
    multi-host pods.

    ## Known problems
    Not reported: `gloo` with `init_method="xla://"` in an SPMD module (the documented CPU
    group for SPMD and distributed checkpointing), `dist.new_group(backend="gloo")` next to an `xla`
    group, scripts launched by torchrun, and branches that run only without XLA.
    `MASTER_*` next to an `xla` group set up with an explicit `init_method="env://"` is
    left to XLA104 (one finding per fix), and is not reported in a module that starts RPC
    (`rpc.init_rpc`) or a `TCPStore`, whose own rendezvous reads it.

    ## Example
    ```python
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = "12355"
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    ```

    ## Use instead
    ```python
    import torch_xla.distributed.xla_backend
    dist.init_process_group("xla", init_method="xla://")
    ```

    ## References
    - torch_xla `README.md` DDP diff; `docs/source/learn/_pjrt.md` "PJRT and torch.distributed"
    - torch_xla `torch_xla/_internal/rendezvous.py` (`xla://` reads `MASTER_ADDR` if set)
    - torch_xla `docs/source/perf/spmd_distributed_checkpoint.md` "Process Groups" (gloo + xla://)
    - Applies to torch_xla 2.1-2.9 (`xla://` since 2.1; `pjrt://` in 2.0).
    """

    code = "XLA103"
    fix_applicability = "unsafe"
    name = "non-xla-process-group"
    message = "non-XLA process group in XLA code"
    fix = 'use init_process_group("xla", init_method="xla://")'
    severity = "E"
    versions = "2.0+"
    reported_at = 'the `init_process_group(...)` call; for `MASTER_ADDR` / `MASTER_PORT`, the environment write'
    supersedes = ("XLA109", "XLA104")
    bad = [
        "import torch.distributed as dist\nimport torch_xla\n"
        "def f(i):\n    dist.init_process_group('gloo', rank=i, world_size=8)\n"
        "torch_xla.launch(f)\n",
        "import os\nimport torch_xla\nos.environ['MASTER_ADDR'] = 'localhost'\n",
    ]
    good = [
        "import torch.distributed as dist\nimport torch_xla\nimport torch_xla.runtime as xr\n"
        "xr.use_spmd()\ndist.init_process_group('gloo', init_method='xla://')\n",
        "import torch.distributed as dist\nimport torch_xla\n"
        "def f(i):\n    dist.init_process_group('xla', init_method='xla://')\n"
        "    cpu = dist.new_group(backend='gloo')\n"
        "torch_xla.launch(f)\n",
    ]

    def check(self, model):
        method = init_method(self.settings)
        fix = self.fix.replace("xla://", method)
        if model.torchrun_hints():
            return
        for call, ctx in model.calls_to(INIT_PG):
            if not (model.in_xla_code(ctx) and model.is_launched(ctx)):
                continue
            backend = _backend(model, call, ctx)
            if backend not in ("gloo", "nccl", "mpi"):
                continue
            if backend == "gloo" and _init_method(model, call, ctx) in ("xla://", "pjrt://") and model.uses_spmd():
                continue
            yield self.finding(call, f'"{backend}" process group in XLA code', fix)
        if _explicit_env_init(model) or _other_env_rendezvous(model):
            return
        for key, node, _, ctx in model.env_writes():
            if key in MASTER_VARS and model.in_xla_code(ctx):
                yield self.finding(node, f"{key} set in XLA code", f'drop it and use init_method="{method}"')


@rule
class XlaPgWithoutXlaInitMethod(Rule):
    """## What it does
    Flags `init_process_group("xla", ...)` (backend resolved through simple constants)
    without `init_method="xla://"` (keyword or second positional argument) in code
    started by the XLA launcher.

    ## Why is this bad?
    Without an init method torch falls back to `env://`, which needs `MASTER_ADDR`,
    `RANK` and `WORLD_SIZE`: under `xmp.spawn` / `torch_xla.launch` it raises
    `ValueError: Error initializing torch.distributed using env:// rendezvous: environment
    variable MASTER_ADDR expected`. On TPU v2/v3 `env://` cannot serve the multithreaded
    replicas at all.

    ## Known problems
    Scripts launched by torchrun (reads of `RANK`/`LOCAL_RANK` outside launched code,
    `dist.is_torchelastic_launched()`) are not reported: torchrun sets the variables.
    Note `docs/source/perf/ddp.md` itself shows the form without `init_method` since 2.6.

    ## Example
    ```python
    dist.init_process_group("xla", rank=rank, world_size=world_size)
    ```

    ## Use instead
    ```python
    dist.init_process_group("xla", init_method="xla://")
    ```
    On torch_xla 2.0 the init method is `pjrt://`, registered by
    `import torch_xla.experimental.pjrt_backend` (XLA105).

    ## References
    - torch_xla `docs/source/learn/_pjrt.md` (`init_method='xla://'`, torchrun support since 2.1)
    - torch_xla `README.md` DDP diff; `torch_xla/_internal/rendezvous.py`
    - Applies to torch_xla 2.1-2.9 (`xla://` since 2.1; `pjrt://` in 2.0).
    """

    code = "XLA104"
    name = "xla-pg-without-xla-init-method"
    message = 'init_process_group("xla") without init_method falls back to env://'
    fix = 'pass init_method="xla://", drop rank=/world_size='
    severity = "E"
    versions = "2.0+ (pjrt:// in 2.0, xla:// from 2.1)"
    reported_at = 'the `init_process_group(...)` call'
    fix_applicability = "safe"
    supersedes = ("XLA109",)
    bad = [
        "import torch.distributed as dist\nimport torch_xla\n"
        "def f(i):\n    dist.init_process_group('xla', rank=i, world_size=8)\n"
        "torch_xla.launch(f)\n",
    ]
    good = [
        "import torch.distributed as dist\nimport torch_xla\n"
        "def f(i):\n    dist.init_process_group('xla', 'xla://')\n"
        "torch_xla.launch(f)\n",
        "import os\nimport torch.distributed as dist\nimport torch_xla\n"
        "def main():\n    rank = int(os.environ['RANK'])\n    dist.init_process_group('xla')\n",
    ]

    def check(self, model):
        method = init_method(self.settings)
        if model.torchrun_hints():
            return
        for call, ctx in model.calls_to(INIT_PG):
            if not (model.in_xla_code(ctx) and model.is_launched(ctx)):
                continue
            if _backend(model, call, ctx) != "xla":
                continue
            current = _init_method(model, call, ctx)
            if current is UNKNOWN or current in ("xla://", "pjrt://"):
                continue
            fix = self.fix.replace("xla://", method)
            yield self.finding(call, fix=fix)


@rule
class RankFromEnvOrHardcoded(Rule):
    """## What it does
    In code started by the XLA launcher: flags reads of `RANK`, `WORLD_SIZE`,
    `LOCAL_RANK` and `LOCAL_WORLD_SIZE` from `os.environ` (`[...]`, `.get`, `os.getenv`),
    and literal integers passed as `world_size=` or `num_replicas=` (also through a constant:
    `WORLD_SIZE = 8` in the module, or `config.WORLD_SIZE` of a project module).

    ## Why is this bad?
    The XLA launcher sets none of these variables (it sets `PJRT_LOCAL_PROCESS_RANK` and
    friends), so the read raises `KeyError` or returns a default; a hard-coded world size
    is wrong on every other topology (a v4-8 runs 4 processes, a v3-8 8 replicas).

    ## Known problems
    Scripts launched by torchrun are not reported, nor reads guarded by
    `if "RANK" in os.environ:` or falling back to torch_xla's answer
    (`os.environ.get("LOCAL_RANK", xr.local_ordinal())`: torchrun-compatible code). A call
    already reported by XLA103 or XLA104 is not reported again.

    ## Example
    ```python
    def _mp_fn(index):
        rank = int(os.environ["RANK"])
        sampler = DistributedSampler(ds, num_replicas=8, rank=rank)
    ```

    ## Use instead
    ```python
    import torch_xla.runtime as xr

    def _mp_fn(index):
        sampler = DistributedSampler(ds, num_replicas=xr.world_size(), rank=xr.global_ordinal())
    ```
    (`xr.local_ordinal()` for `LOCAL_RANK`; before torch_xla 2.1 `xm.xrt_world_size()`,
    `xm.get_ordinal()`, `xm.get_local_ordinal()`.)

    ## References
    - torch_xla `docs/source/perf/ddp.md` step 3 ("Use xla specific APIs to get rank and world_size")
    - torch_xla `torch_xla/_internal/pjrt.py` (the variables the launcher sets)
    - Applies to torch_xla 2.1-2.9 (`torch_xla.runtime` since 2.1).
    """

    code = "XLA109"
    fix_applicability = "unsafe"
    name = "rank-from-env-or-hardcoded"
    message = "rank or world size not taken from the XLA runtime"
    fix = "use xr.global_ordinal(), xr.world_size(), xr.local_ordinal()"
    severity = "E"
    versions = "2.1+"
    reported_at = 'the environment read (`os.environ["RANK"]`, `os.getenv("RANK")`); for a literal world size, the call given `world_size=` / `num_replicas=`'
    bad = [
        "import os\nimport torch_xla\n"
        "def f(i):\n    return int(os.environ['WORLD_SIZE'])\n"
        "torch_xla.launch(f)\n",
        "import torch_xla\nfrom torch.utils.data.distributed import DistributedSampler\n"
        "def f(i, ds):\n    return DistributedSampler(ds, num_replicas=8, rank=i)\n"
        "torch_xla.launch(f, args=(None,))\n",
    ]
    good = [
        "import torch_xla\nimport torch_xla.runtime as xr\nfrom torch.utils.data.distributed import DistributedSampler\n"
        "def f(i, ds):\n    return DistributedSampler(ds, num_replicas=xr.world_size(), rank=xr.global_ordinal())\n"
        "torch_xla.launch(f, args=(None,))\n",
    ]

    def check(self, model):
        if model.torchrun_hints():
            return
        rank_args = None
        for key, node, ctx in model.env_reads():
            if key in RANK_VARS and model.is_launched(ctx) and model.in_xla_code(ctx) \
                    and not _guarded_by_env_test(model, ctx, RANK_VARS) and not _xla_fallback(model, node, ctx):
                orig = key
                if key == "LOCAL_RANK":
                    if rank_args is None:
                        rank_args = _rank_argument_ids(model)
                    if id(node) in rank_args:
                        key = "RANK"  # a sampler's / group's rank counts replicas on every host
                yield self.finding(
                    node, f'os.environ["{orig}"] is not set by the XLA launcher',
                    f"use {runtime_api(self.settings, key)}",
                )
        for call, ctx in model.keyword_calls("world_size", "num_replicas"):
            if not model.is_launched(ctx) or not model.in_xla_code(ctx):
                continue
            for kw in call.keywords:
                if kw.arg not in ("world_size", "num_replicas"):
                    continue
                value = kw.value.value if type(kw.value) is ast.Constant else model.const(kw.value, ctx) \
                    if type(kw.value) in (ast.Name, ast.Attribute) else None
                if type(value) is int and value > 1:  # 1: deliberately not sharded
                    shown = render(kw.value) if type(kw.value) is ast.Constant else f"{render(kw.value)} (= {value})"
                    yield self.finding(
                        call, f"hard-coded {kw.arg}={shown} under the XLA launcher",
                        f"use {runtime_api(self.settings, 'WORLD_SIZE')}",
                    )


def _xla_fallback(model, node, ctx) -> bool:
    """``os.environ.get("LOCAL_RANK", xr.local_ordinal())`` / ``os.getenv(...)``: a read
    whose default is torch_xla's own answer, which is what runs under the XLA launcher
    (torchrun-compatible code)."""
    if type(node) is not ast.Call:
        return False
    default = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "default"), None)
    while type(default) is ast.Call and type(default.func) is ast.Name and default.func.id in ("str", "int") \
            and default.args:
        default = default.args[0]  # str(xr.local_ordinal())
    return type(default) is ast.Call and (model.call_name(default, ctx) or "").startswith("torch_xla.")


# Imports that register the "xla" backend and xla:// init method, per target release
# (followed through the release tags' import chains: 2.5+ `import torch_xla` itself does).
# In 2.0 xla_model imports experimental.pjrt, which imports xla_backend: any torch_xla
# module but the bare package registers it.
_REGISTERS = {
    "2.0": ("torch_xla.",),
    "2.1-2.4": ("torch_xla.distributed.xla_backend", "torch_xla.distributed.xla_multiprocessing",
                "torch_xla.experimental.pjrt_backend", "torch_xla.experimental.pjrt",
                "torch_xla._internal.pjrt", "torch_xla._internal.rendezvous"),
}


@rule
class XlaBackendNotRegistered(Rule):
    """## What it does
    Flags `init_process_group("xla", ...)` (or `init_method="xla://"`) in a module that
    imports nothing that registers the `xla` backend, when the target is torch_xla 2.4
    or older.

    ## Why is this bad?
    Up to 2.4 the backend and the `xla://` init method exist only once
    `torch_xla.distributed.xla_backend` was imported (directly, or through
    `torch_xla.distributed.xla_multiprocessing`; in 2.0 also `xla_model`): otherwise
    `init_process_group` fails with an invalid backend. From 2.5 `import torch_xla`
    registers it. In 2.0 there is no `xla://` at all, and `pjrt://` needs
    `torch_xla.experimental.pjrt_backend`: both are reported there too.

    ## Example
    ```python
    import torch_xla
    dist.init_process_group("xla", init_method="xla://")
    ```

    ## Use instead
    ```python
    import torch_xla.distributed.xla_backend  # registers the "xla" backend and xla://
    dist.init_process_group("xla", init_method="xla://")
    ```

    ## References
    - torch_xla `README.md` (`+import torch_xla.distributed.xla_backend`), `docs/source/perf/ddp.md` step 1
    - torch_xla `torch_xla/torch_xla.py` -> `xla_multiprocessing` -> `_internal/pjrt.py` -> `xla_backend` (2.5+)
    - Reported for `--xla-version` 2.0 to 2.4.
    """

    code = "XLA105"
    name = "xla-backend-not-registered"
    message = '"xla" backend not registered'
    fix = "add import torch_xla.distributed.xla_backend"
    scope = ANYWHERE
    severity = "E"
    versions = "2.0-2.4"
    reported_at = 'the `init_process_group(...)` call'
    bad = ["# options: --xla-version=2.4\nimport torch.distributed as dist\nimport torch_xla\n"
           "dist.init_process_group('xla', init_method='xla://')\n"]
    good = ["# options: --xla-version=2.4\nimport torch.distributed as dist\nimport torch_xla.distributed.xla_backend\n"
            "dist.init_process_group('xla', init_method='xla://')\n",
            "import torch.distributed as dist\nimport torch_xla\n"
            "dist.init_process_group('xla', init_method='xla://')  # 2.5+: import torch_xla registers it\n"]

    def check(self, model):
        target = self.settings.target_version
        if target >= (2, 5):
            return
        imported = [full for _, _, full, _ in model.imports + model.import_froms]
        if target == (2, 0):
            yield from self._check_20(model, imported)
        registering = _REGISTERS["2.0"] if target == (2, 0) else _REGISTERS["2.1-2.4"]
        if any(full == r or full.startswith(r if r.endswith(".") else r + ".") for full in imported for r in registering):
            return
        for call, ctx in model.calls_to(INIT_PG):
            if model.is_xla_off(ctx):
                continue
            if _backend(model, call, ctx) == "xla" or _init_method(model, call, ctx) == "xla://":
                yield self.finding(call)

    def _check_20(self, model, imported):
        """torch_xla 2.0 has no ``xla://``; ``pjrt://`` exists once ``experimental.pjrt_backend``
        is imported (docs/pjrt.md at v2.0.0)."""
        has_pjrt_backend = any(full.startswith("torch_xla.experimental.pjrt_backend") for full in imported)
        for call, ctx in model.calls_to(INIT_PG):
            method = _init_method(model, call, ctx)
            if model.is_xla_off(ctx) or model.version_adaptive(ctx):
                continue
            if method == "xla://":
                yield self.finding(call, 'init_method="xla://" is not in torch_xla 2.0',
                                   'use "pjrt://" and add import torch_xla.experimental.pjrt_backend')
            elif method == "pjrt://" and not has_pjrt_backend:
                yield self.finding(call, 'init_method="pjrt://" not registered in torch_xla 2.0',
                                   "add import torch_xla.experimental.pjrt_backend")


@rule
class PjrtInitMethod(Rule):
    """## What it does
    Flags `init_method="pjrt://"` (keyword or second positional argument of
    `init_process_group`) when the target is torch_xla 2.1 or newer.

    ## Why is this bad?
    The `pjrt://` init method was renamed `xla://` in 2.1; `pjrt://` needs
    `torch_xla.experimental.pjrt_backend` and is kept only for compatibility.

    ## Known problems
    Not reported inside an explicit version branch (`if torch_xla.__version__ ...`,
    `elif is_pt20:`), where `pjrt://` serves torch_xla 2.0.

    ## Example
    ```python
    dist.init_process_group("xla", init_method="pjrt://")
    ```

    ## Use instead
    ```python
    dist.init_process_group("xla", init_method="xla://")
    ```

    ## References
    - torch_xla `docs/source/learn/_pjrt.md` "New features in PyTorch/XLA r2.1" (`pjrt://` renamed `xla://`)
    - torch_xla `torch_xla/distributed/xla_backend.py` (registers `xla://` from 2.1)
    - Reported from `--xla-version=2.1` on.
    """

    code = "XLA106"
    name = "pjrt-init-method"
    message = 'init_method="pjrt://" was renamed "xla://" in torch_xla 2.1'
    fix = 'use init_method="xla://"'
    scope = ANYWHERE
    severity = "C"
    versions = "2.1+"
    reported_at = 'the `init_process_group(...)` call'
    fix_applicability = "safe"
    bad = ["import torch.distributed as dist\nimport torch_xla\n"
           "dist.init_process_group('xla', init_method='pjrt://')\n"]
    good = ["import torch.distributed as dist\nimport torch_xla\n"
            "dist.init_process_group('xla', init_method='xla://')\n"]

    def check(self, model):
        if self.settings.target_version < (2, 1):
            return
        for call, ctx in model.calls_to(INIT_PG):
            if _init_method(model, call, ctx) == "pjrt://" and not model.version_adaptive(ctx):
                yield self.finding(call)


@rule
class XlaPgUnderSpmd(Rule):
    """## What it does
    Flags `init_process_group("xla", ...)` (backend resolved through simple constants) in
    a module that turns SPMD mode on (`xr.use_spmd()`, `XLA_USE_SPMD` set), where both can
    run in one program run; in project mode also in a module whose function an SPMD
    program of the project runs (`xr.use_spmd()` in another module's helper) and no
    multi-process launch reaches.

    ## Why is this bad?
    The `xla` backend refuses SPMD: `_create_xla_process_group` asserts
    `not xr.is_spmd()` ("XLA backend is not supported with SPMD. Please use a CPU process
    group instead."). Under SPMD there is one process per host and the collectives come
    from the sharding annotations; a process group is only needed for CPU coordination
    (distributed checkpointing), and that one is `gloo` with the `xla://` init method.

    ## Known problems
    Not reported: calls inside `with self.assertRaises(...)` / `pytest.raises(...)` (tests
    of the error itself), an `init_process_group("xla")` and an SPMD switch on opposite
    branches of the same test, or in two functions only a caller outside the module could
    choose between.

    ## Example
    ```python
    xr.use_spmd()
    dist.init_process_group("xla", init_method="xla://")
    ```

    ## Use instead
    ```python
    xr.use_spmd()
    dist.init_process_group("gloo", init_method="xla://")
    ```

    ## References
    - torch_xla `torch_xla/distributed/xla_backend.py` `_create_xla_process_group` (#5690, 2.2)
    - torch_xla `docs/source/perf/spmd_distributed_checkpoint.md` "Process Groups" (gloo + xla://)
    - torch_xla `test/spmd/test_xla_spmd_python_api_interaction.py` `test_xla_backend`
    - Applies to torch_xla 2.2-2.9 (AssertionError); undefined behaviour before.
    """

    code = "XLA107"
    reported_at = 'the `init_process_group("xla", ...)` call'
    name = "xla-pg-under-spmd"
    message = 'init_process_group("xla") fails under SPMD'
    fix = 'use init_process_group("gloo", init_method="xla://")'
    severity = "E"
    versions = "2.2+ (AssertionError)"
    supersedes = ("XLA104", "XLA105", "XLA106", "XLA109")
    bad = [
        "import torch.distributed as dist\nimport torch_xla\nimport torch_xla.runtime as xr\n"
        "xr.use_spmd()\n"
        "dist.init_process_group('xla', init_method='xla://')\n",
    ]
    good = [
        "import torch.distributed as dist\nimport torch_xla\nimport torch_xla.runtime as xr\n"
        "xr.use_spmd()\n"
        "dist.init_process_group('gloo', init_method='xla://')\n",
        "import torch.distributed as dist\nimport torch_xla\n"
        "dist.init_process_group('xla', init_method='xla://')\n",
    ]

    def check(self, model):
        switches = model.spmd_switches()
        # project mode: the program turns SPMD on in another module (a setup_spmd() helper)
        elsewhere = not switches and model.project_setup is not None and model.project_setup.spmd
        if not switches and not elsewhere:
            return
        method = init_method(self.settings)
        fix = self.fix.replace("xla://", method)
        for call, ctx in model.calls_to(INIT_PG):
            if not model.in_xla_code(ctx) or _backend(model, call, ctx) != "xla":
                continue
            if model.expects_error(call, ctx):
                continue
            if any(model.same_run((node, sctx), (call, ctx)) for node, sctx in switches) \
                    or (elsewhere and model.runs_spmd(ctx) and not _spmd_tested_off(model, ctx)):
                yield self.finding(call, fix=fix)


def _spmd_tested_off(model, ctx) -> bool:
    """Code at ``ctx`` runs only where ``xr.is_spmd()`` is false (the ``else`` of ``if
    xr.is_spmd():``, the body of ``if not xr.is_spmd():``)."""
    link = ctx.frames or None
    while link is not None:
        frame = link.frame
        if type(frame) is tuple and len(frame) == 2 and isinstance(frame[0], ast.AST):
            test, polarity = frame
            if type(test) is ast.UnaryOp and type(test.op) is ast.Not:
                test, polarity = test.operand, not polarity
            if not polarity and type(test) is ast.Call and model.call_name(test, ctx) == "torch_xla.runtime.is_spmd":
                return True
        link = link.parent
    return False


_CUDA_COUNT = "torch.cuda.device_count"
#: keywords that take a world size (``nprocs=`` of a launcher is XLA001's / XLA002's: their fixes drop it)
_WORLD_KEYWORDS = ("world_size", "num_replicas")
_SAMPLERS = ("torch.utils.data.distributed.DistributedSampler", "torch.utils.data.DistributedSampler")
_SCALES = (ast.Mult, ast.Div, ast.FloorDiv)
#: parameters of a launched function whose name says they take the world size
_WORLD_PARAMS = frozenset({"world_size", "num_replicas", "nprocs", "n_gpu", "n_gpus", "ngpus", "num_gpus",
                           "ngpus_per_node", "num_devices", "n_devices"})


def _launch_argument(model, func, param: str) -> list:
    """What the multi-process launches of ``func`` pass for its parameter ``param`` through
    ``args=(...)`` (a tuple display; the first parameter takes the process index):
    ``[(expr, ctx)]``."""
    if param not in func.params:
        return []
    index = func.params.index(param) - 1
    if index < 0:
        return []
    out = []
    for call, ctx, targets, single in model.launches():
        if single or not any(t is func for t in targets):
            continue
        args = model.kwarg(call, "args", 1)
        if type(args) is ast.Tuple and index < len(args.elts) \
                and not any(type(e) is ast.Starred for e in args.elts[:index + 1]):
            out.append((args.elts[index], ctx))
    return out


def _cuda_counts(model, expr, ctx, seen: set, depth: int = 0, maxes: bool = False) -> list:
    """The ``torch.cuda.device_count()`` calls (with their contexts) whose value ``expr``
    holds: directly, through names, products (``gpus * nodes``), both arms of a conditional,
    the arguments callers in the module and multi-process launches (``args=(world_size,)``)
    pass for a parameter. Calls inside an ``if`` / ``while`` test are probes, not values.
    ``seen`` holds the names and parameters already followed by any earlier question of
    the same check: each is followed once (what it reaches was found then), so the work is
    linear in the module however many uses share a value. With ``maxes`` (a learning
    rate's scale), also ``max(1, count)``: 1 on a TPU host, where the linear scaling rule
    wants the replicas' count (a per-device batch size ``8 * max(1, n_gpu)`` is right there)."""
    if depth > 6 or expr is None or expr is UNKNOWN:
        return []
    t = type(expr)
    if t is ast.Call:
        if model.call_name(expr, ctx) == _CUDA_COUNT and id(expr) not in model.calls_in_tests():
            return [(expr, ctx)]
        f = expr.func
        if maxes and type(f) is ast.Name and f.id == "max" and not expr.keywords and len(expr.args) > 1 \
                and not model.lookup("max", ctx, None):  # max(1, count): 1 on a TPU host, not the replicas
            rest = [a for a in expr.args if type(a) is not ast.Constant]
            if len(rest) == 1:
                return _cuda_counts(model, rest[0], ctx, seen, depth + 1, maxes)
        return []
    if t is ast.BinOp and type(expr.op) is ast.Mult:
        return _cuda_counts(model, expr.left, ctx, seen, depth + 1, maxes) + \
            _cuda_counts(model, expr.right, ctx, seen, depth + 1, maxes)
    if t is ast.IfExp:
        return _cuda_counts(model, expr.body, ctx, seen, depth + 1, maxes) + \
            _cuda_counts(model, expr.orelse, ctx, seen, depth + 1, maxes)
    if t is not ast.Name or id(expr) in seen:
        return []
    seen.add(id(expr))
    out = []
    for _, kind, target, b_ctx in model.read_bindings(expr, ctx) or ():
        if kind == "value" and b_ctx is not None:
            if id(target) not in seen:
                seen.add(id(target))
                out.extend(_cuda_counts(model, target, b_ctx, seen, depth + 1, maxes))
        elif kind == "param" and target is not None and (id(target), expr.id) not in seen:
            seen.add((id(target), expr.id))
            for a, c in _launch_argument(model, target, expr.id):
                out.extend(_cuda_counts(model, a, c, seen, depth + 1, maxes))
            for a, _, c in model.passed_arguments(target, expr.id):
                if isinstance(a, ast.AST):
                    out.extend(_cuda_counts(model, a, c, seen, depth + 1, maxes))
    return out


#: the scale uses of a learning rate (:func:`_cuda_counts`' ``maxes``)
_LR_SCALES = ("a scale (lr=)", "a scale (learning_rate=)")


def _world_size_uses(model):
    """``(expr, ctx, how)`` of the values used as a world size in XLA code: ``world_size=`` /
    ``num_replicas=`` keywords, a `DistributedSampler`'s second positional argument, the
    operands of a product or quotient passed to a call (``lr=0.01 * world_size``), and what
    a multi-process launch passes (``args=(...)``) for a parameter of its function named as
    a world size (``def main(rank, world_size)``: the DDP tutorial's shape, whatever the
    function then does with it)."""
    for call, ctx, targets, single in model.launches():
        args = model.kwarg(call, "args", 1)
        if single or type(args) is not ast.Tuple or not model.in_xla_code(ctx):
            continue
        for t in targets:
            for i, elt in enumerate(args.elts):
                if type(elt) is ast.Starred:
                    break
                if i + 1 < len(t.params) and t.params[i + 1] in _WORLD_PARAMS:
                    yield elt, ctx, f"{t.params[i + 1]} of {t.name}()"
    for call, ctx in model.keyword_calls(*_WORLD_KEYWORDS):
        if model.in_xla_code(ctx):
            for kw in call.keywords:
                if kw.arg in _WORLD_KEYWORDS:
                    yield kw.value, ctx, f"{kw.arg}="
    for call, ctx in model.calls_to(*_SAMPLERS):
        if len(call.args) > 1 and type(call.args[0]) is not ast.Starred and model.in_xla_code(ctx):
            yield call.args[1], ctx, "num_replicas"
    for call, ctx in model.calls:
        values = [(a, None) for a in call.args] + [(k.value, k.arg) for k in call.keywords]
        for value, name in values:
            if type(value) is ast.Name:  # lr=lr for lr = base_lr * world_size, bound once
                bound = model.read_bindings(value, ctx)
                if bound and len(bound) == 1 and bound[0][1] == "value" and bound[0][3] is not None:
                    value = bound[0][2]
            if type(value) is not ast.BinOp or type(value.op) not in _SCALES or not model.in_xla_code(ctx):
                continue
            todo = [value]
            while todo:
                node = todo.pop()
                for side in (node.left, node.right):
                    if type(side) is ast.BinOp and type(side.op) in _SCALES:
                        todo.append(side)
                    elif type(side) in (ast.Name, ast.Call):
                        yield side, ctx, f"a scale ({name}=)" if name else "a scale"


@rule
class CudaDeviceCountWorldSize(Rule):
    """## What it does
    Flags `torch.cuda.device_count()` in XLA code whose value is used as a world size:
    passed as `world_size=` / `num_replicas=` (a `DistributedSampler`, `init_process_group`),
    as a factor of a scale passed to a call (`lr=0.01 * world_size`,
    `batch_size=bs * world_size`), or by a multi-process launch (`args=(world_size,)`) to a
    parameter named as a world size (`world_size`, `num_replicas`, `nprocs`, `n_gpus`,
    `ngpus_per_node`, ...); directly, through names, products, the arguments module callers
    pass and a launch's `args=` that reaches such a use in the launched function. Reported
    at the `torch.cuda.device_count()` call.

    ## Why is this bad?
    On a TPU host there is no CUDA device: `torch.cuda.device_count()` is 0. The DDP
    tutorial's `world_size = torch.cuda.device_count(); mp.spawn(main, args=(world_size,),
    nprocs=world_size)`, ported to `torch_xla.launch(main, args=(world_size,))`, passes 0 as
    the world size: a sampler with `num_replicas=0` divides by zero, a learning rate scaled
    by it is 0 (nothing trains). The replicas' count is `xr.world_size()` in the launched
    code. Measured on torch_xla 2.9 (CPU, no GPU): `torch.cuda.device_count()` returned 0
    where `xr.world_size()` in the launched function returned 1.

    ## Known problems
    Not reported: a backend probe (`if torch.cuda.device_count() > 0:`), CUDA branches
    (`if torch.cuda.is_available():`), calls other than a product and `max(1, count)` (it is
    followed only in a learning rate's scale, `lr=base_lr * max(1, n_gpu)`: 1 on a TPU host,
    where the linear scaling rule wants the replicas' count; a per-device batch size
    `8 * max(1, n_gpu)` is right there), scales assigned to a name that no call is
    passed (`total = bs * world_size`; `lr = base_lr * world_size` then `SGD(..., lr=lr)` is
    followed), and `nprocs=torch.cuda.device_count()`: XLA001 (`xmp.spawn`)
    or XLA002 (`torch.multiprocessing.spawn`) reports that launch, and their fixes drop
    `nprocs`.

    The fix (safe) rewrites the call to `xr.world_size()` (`xm.xrt_world_size()` before
    2.1) when it is in launched code or in a script without a multi-process launch. Under
    SPMD one process drives all of the host's devices (`xr.world_size()` is 1 there): the
    message names `xr.global_runtime_device_count()` (the devices; `xr.process_count()`
    counts the hosts, as a sampler sharding per host wants), and which is meant is left to
    you. In the
    launching process it is left to you: asking the runtime there starts it before the
    launch (XLA003); drop the value and read `xr.world_size()` in the launched function.
    `flake8-xla --fix --unsafe-fixes` on the DDP tutorial's shape ports the launch (XLA002)
    and leaves this finding reported where the value still reaches a world-size use.

    ## Example
    ```python
    def main(rank, world_size):
        sampler = DistributedSampler(ds, num_replicas=world_size, rank=rank)

    if __name__ == "__main__":
        world_size = torch.cuda.device_count()
        torch_xla.launch(main, args=(world_size,))
    ```

    ## Use instead
    ```python
    def main(rank):
        sampler = DistributedSampler(ds, num_replicas=xr.world_size(), rank=xr.global_ordinal())

    if __name__ == "__main__":
        torch_xla.launch(main)
    ```

    ## References
    - PyTorch DDP tutorial ("Getting Started with Distributed Data Parallel":
      `world_size = torch.cuda.device_count()`, `mp.spawn(..., nprocs=world_size)`)
    - torch_xla `docs/source/perf/ddp.md` step 3 ("Use xla specific APIs to get rank and
      world_size"); `torch_xla/runtime.py` `world_size()` (2.1-2.9)
    - Applies to torch_xla 2.0-2.9 (`xr.world_size()` since 2.1, `xm.xrt_world_size()` before).
    """

    code = "XLA110"
    name = "cuda-device-count-world-size"
    message = "torch.cuda.device_count() is 0 on TPU"
    fix = "use xr.world_size()"
    severity = "E"
    versions = "2.0+"
    reported_at = "the `torch.cuda.device_count()` call"
    fix_applicability = "safe"
    bad = [
        "import torch\nimport torch_xla\nfrom torch.utils.data.distributed import DistributedSampler\n"
        "def main(rank, ds):\n"
        "    return DistributedSampler(ds, num_replicas=torch.cuda.device_count(), rank=rank)\n"
        "torch_xla.launch(main, args=(None,))\n",
    ]
    good = [
        "import torch\nimport torch_xla\nimport torch_xla.runtime as xr\n"
        "from torch.utils.data.distributed import DistributedSampler\n"
        "def main(rank, ds):\n"
        "    if torch.cuda.device_count() > 0:\n        print('a GPU too')\n"
        "    return DistributedSampler(ds, num_replicas=xr.world_size(), rank=xr.global_ordinal())\n"
        "torch_xla.launch(main, args=(None,))\n",
    ]

    def check(self, model):
        if not model.calls_to(_CUDA_COUNT):
            return
        found: dict[int, tuple] = {}
        seen: set = set()
        for expr, ctx, how in _world_size_uses(model):
            for call, cctx in _cuda_counts(model, expr, ctx, seen, maxes=how in _LR_SCALES):
                if id(call) not in found and model.in_xla_code(cctx):
                    found[id(call)] = (call, cctx, how)
        if not found:
            return
        parent = bool(model.multi_launches())
        spmd = model.uses_spmd()
        runtime = runtime_api(self.settings, "WORLD_SIZE")
        for call, cctx, how in sorted(found.values(), key=lambda r: (r[0].lineno, r[0].col_offset)):
            problem = f"torch.cuda.device_count() is 0 on TPU, used as {how}"
            if parent and not model.is_launched(cctx):
                yield self.finding(call, problem, f"read {runtime} in the launched function")
            elif spmd:  # one process drives every device of the host: which count is meant?
                yield self.finding(call, problem, "use xr.global_runtime_device_count()")
            else:
                yield self.finding(call, problem, f"use {runtime}")
