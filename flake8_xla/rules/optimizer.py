"""XLA1/XLA2: the optimizer step on wrapped models, gradient clipping and the step barrier;
replica initialisation and the device RNG."""

from __future__ import annotations

import ast

from .. import api_table
from ..model.reductions import GRADIENT_REDUCERS, OPTIMIZER_STEP, REDUCED_ARG, reduces_gradients, \
    reduces_visible_gradients
from ..model.replicas import is_rank_value, single_replica_branch
from ..model.runtime import DROPOUT_FUNCTIONS, DROPOUT_MODULES
from ..registry import Rule, rule
from ._common import render, source_text

CLIPS = (
    "torch.nn.utils.clip_grad_norm_", "torch.nn.utils.clip_grad_value_", "torch.nn.utils.clip_grad_norm",
    "torch.nn.utils.clip_grad.clip_grad_norm_", "torch.nn.utils.clip_grad.clip_grad_value_",
    "torch.nn.utils.clip_grad.clip_grad_norm",
)
TORCH_SEEDS = ("torch.manual_seed", "torch.random.manual_seed")
#: imported helpers that seed torch's generator with their first argument
SEED_HELPERS = ("transformers.set_seed", "transformers.trainer_utils.set_seed", "accelerate.utils.set_seed",
                "lightning.seed_everything", "lightning.fabric.seed_everything", "pytorch_lightning.seed_everything",
                "lightning.pytorch.seed_everything", "lightning_fabric.utilities.seed.seed_everything",
                "lightning.fabric.utilities.seed.seed_everything")
XLA_SEEDS = ("torch_xla.manual_seed", "torch_xla.core.xla_model.set_rng_state")
BROADCASTS = (
    "torch_xla.core.xla_model.broadcast_master_param", "torch_xla.experimental.pjrt.broadcast_master_param",
    "torch_xla.core.xla_model.collective_broadcast", "torch.distributed.broadcast",
)
#: loading weights after the seed makes every replica's start the same (unknown: silent)
_LOADS = ("load_state_dict", "from_pretrained", "load_checkpoint")
BROADCAST_MASTER_PARAM = "torch_xla.core.xla_model.broadcast_master_param"
TORCH_XLA_MANUAL_SEED = "torch_xla.manual_seed"


def _steps_of_wrapped(model, kind):
    """``(xm.optimizer_step call, ctx, wrap calls)`` in XLA code whose optimizer updates a
    module wrapped by ``kind`` on a path that runs with the step."""
    for call, ctx in model.calls_to(OPTIMIZER_STEP):
        if not model.in_xla_code(ctx):
            continue
        opt = model.kwarg(call, "optimizer", 0)
        if not isinstance(opt, ast.AST):
            continue
        wraps = model.optimizer_wraps(opt, ctx, kind)
        live = [w for w in wraps or () if not model.exclusive((call, ctx), w)]
        if live:
            yield call, ctx, opt, live


@rule
class DdpWithXmOptimizerStep(Rule):
    """## What it does
    Flags `xm.optimizer_step(optimizer)` in XLA code when the optimizer updates the
    parameters of a module wrapped in `DistributedDataParallel` on a path that runs with
    the step: `model = DDP(model)` before `SGD(model.parameters())`, or `DDP(model)`
    next to an optimizer over `model.parameters()` (also `ddp.module.parameters()`).

    ## Why is this bad?
    DDP all-reduces (averages) the gradients during `backward()`.
    `xm.optimizer_step` all-reduces them once more before stepping: a second collective
    over every gradient, each step. On torch_xla 2.9 the double reduction does not even
    compile: DDP's all-reduce and the step's land in one graph, and the step fails with
    `ValueError: HloModule has a mix of layout constrained and unconstrained AllReduce
    instructions` (seen on two replicas on the CPU client; with `optimizer.step()` the same
    step runs and the replicas' weights agree). Even where it compiled, the second
    collective would be pure cost (averaging identical gradients changes nothing). The PyTorch/XLA
    reference scripts branch exactly this way:
    `if ddp: optimizer.step() else: xm.optimizer_step(optimizer)`.

    ## Known problems
    Not reported when the DDP wrap and the step are alternatives (`if flags.ddp: model =
    DDP(model)` and `xm.optimizer_step` in the `else` of `if flags.ddp:`), when the
    optimizer's construction or the modules it updates cannot be seen (a parameter no
    caller in the module fills, an imported helper), or when DDP is used only where XLA
    is off.

    ## Example
    ```python
    model = DDP(model, gradient_as_bucket_view=True)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    ...
    xm.optimizer_step(optimizer)
    ```

    ## Use instead
    ```python
    optimizer.step()      # DDP already averaged the gradients
    ```

    ## References
    - torch_xla `test/test_train_mp_mnist.py`, `test/test_train_mp_imagenet.py` (`if flags.ddp: optimizer.step() else: xm.optimizer_step(optimizer)`)
    - torch_xla `docs/source/perf/ddp.md` (the DDP example steps with `optimizer.step()`)
    - torch_xla `torch_xla/core/xla_model.py` `optimizer_step` -> `reduce_gradients` -> `all_reduce`
    - Applies to torch_xla 2.0-2.9.
    """

    code = "XLA108"
    reported_at = 'the `xm.optimizer_step(...)` call'
    name = "ddp-with-xm-optimizer-step"
    message = "xm.optimizer_step on a DDP model reduces gradients DDP already averaged"
    fix = "use optimizer.step()"
    severity = "W"
    versions = "2.0+"
    bad = [
        "import torch, torch_xla\nimport torch_xla.core.xla_model as xm\n"
        "from torch.nn.parallel import DistributedDataParallel as DDP\n"
        "def f(index, loader):\n"
        "    model = DDP(torch.nn.Linear(4, 2).to(torch_xla.device()), gradient_as_bucket_view=True)\n"
        "    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "    for x in loader:\n"
        "        model(x).sum().backward()\n"
        "        xm.optimizer_step(opt)\n",
    ]
    good = [
        "import torch, torch_xla\nimport torch_xla.core.xla_model as xm\n"
        "from torch.nn.parallel import DistributedDataParallel as DDP\n"
        "def f(index, loader, use_ddp):\n"
        "    model = torch.nn.Linear(4, 2).to(torch_xla.device())\n"
        "    if use_ddp:\n"
        "        model = DDP(model, gradient_as_bucket_view=True)\n"
        "    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "    for x in loader:\n"
        "        model(x).sum().backward()\n"
        "        if use_ddp:\n"
        "            opt.step()\n"
        "        else:\n"
        "            xm.optimizer_step(opt)\n",
    ]

    def check(self, model):
        for call, _, opt, _ in _steps_of_wrapped(model, "ddp"):
            name = render(opt)
            yield self.finding(call, f"xm.optimizer_step({name}) on a DDP model reduces gradients DDP already averaged",
                               f"use {name}.step()")


@rule
class FsdpWithXmOptimizerStep(Rule):
    """## What it does
    Flags `xm.optimizer_step(optimizer)` in XLA code when the optimizer updates the
    parameters of a module wrapped in torch_xla's `XlaFullyShardedDataParallel` (FSDP)
    on a path that runs with the step.

    ## Why is this bad?
    XLA FSDP reduce-scatters the gradients itself, so each rank holds the reduced
    gradient of its own parameter shard. `xm.optimizer_step` all-reduces those shard
    gradients across ranks once more: an extra collective every step, and since each
    rank holds a different shard, averaging them mixes gradients of unrelated
    parameters. The FSDP guide says to call `optimizer.step()` directly.

    ## Known problems
    Not reported when the FSDP wrap and the step are alternatives (opposite arms of one
    `if`), or when the optimizer's construction or the module it updates cannot be seen.
    FSDPv2 (`SpmdFullyShardedDataParallel`) runs one process per host, where
    `xm.optimizer_step` reduces nothing; it is not reported.

    ## Example
    ```python
    model = FSDP(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    ...
    xm.optimizer_step(optimizer)
    ```

    ## Use instead
    ```python
    optimizer.step()      # FSDP already reduce-scattered the gradients
    ```

    ## References
    - torch_xla `docs/source/perf/fsdp_collectives.md` ("directly call `optimizer.step` and do not call `xm.optimizer_step`")
    - torch_xla `examples/fsdp/train_resnet_fsdp_auto_wrap.py` (steps with `optimizer.step()`)
    - Applies to torch_xla 2.0-2.9.
    """

    code = "XLA202"
    reported_at = 'the `xm.optimizer_step(...)` call'
    name = "fsdp-with-xm-optimizer-step"
    message = "xm.optimizer_step on an XLA FSDP model averages different shards' gradients"
    fix = "use optimizer.step()"
    severity = "E"
    versions = "2.0+"
    bad = [
        "import torch, torch_xla\nimport torch_xla.core.xla_model as xm\n"
        "from torch_xla.distributed.fsdp import XlaFullyShardedDataParallel as FSDP\n"
        "def f(index, loader):\n"
        "    model = FSDP(torch.nn.Linear(4, 2).to(torch_xla.device()))\n"
        "    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)\n"
        "    for x in loader:\n"
        "        model(x).sum().backward()\n"
        "        xm.optimizer_step(opt)\n",
    ]
    good = [
        "import torch, torch_xla\n"
        "from torch_xla.distributed.fsdp import XlaFullyShardedDataParallel as FSDP\n"
        "def f(index, loader):\n"
        "    model = FSDP(torch.nn.Linear(4, 2).to(torch_xla.device()))\n"
        "    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)\n"
        "    for x in loader:\n"
        "        model(x).sum().backward()\n"
        "        opt.step()\n",
    ]

    def check(self, model):
        for call, _, opt, _ in _steps_of_wrapped(model, "fsdp"):
            name = render(opt)
            yield self.finding(call, f"xm.optimizer_step({name}) on an XLA FSDP model averages different shards' "
                                     "gradients", f"use {name}.step()")


@rule
class ClipBeforeGradientReduction(Rule):
    """## What it does
    Flags `torch.nn.utils.clip_grad_norm_` / `clip_grad_value_` before
    `xm.optimizer_step(optimizer)` in the same iteration of code started by a
    multi-process XLA launcher, with no gradient reduction before the clip. In project
    mode the step may also be a call of another project module's function or method that
    calls `xm.optimizer_step` and no gradient reduction (`backend.optimizer_step(optimizer)`
    where the launched function's `backend` is a `TPUBackend`). Reported at the clip call.

    ## Why is this bad?
    `xm.optimizer_step` all-reduces the gradients and then steps. Clipping before it
    clips each replica's local gradient with its local norm: replicas clip by different
    factors, and the averaged update is not the clipped global gradient. Gradient
    clipping is meant for the reduced gradients.

    ## Known problems
    A clip in a helper of the module (`def clip_gradients(self): clip_grad_norm_(...)`)
    counts where the step loop calls it, before the step (`self.clip_gradients();
    self.optimizer_step()`, the step an override's `xm.optimizer_step`).
    Not reported when `xm.reduce_gradients(optimizer)` or an all-reduce of the gradients
    (a module helper doing one counts) runs before the clip, when the optimizer updates a
    DDP model (DDP has reduced already: XLA108 speaks), when the module uses DDP and the
    optimizer's model cannot be seen, when the module uses XLA FSDP (its
    `model.clip_grad_norm_` clips the sharded gradients; XLA202 reports
    `xm.optimizer_step` there), under SPMD or a training framework, in the single-replica
    branch of `if xr.world_size() > 1:`, without a launcher (a single process: the
    all-reduce changes nothing), with `nprocs=1` / `debug_single_process=True`, when the
    clip and the step sit under two unrelated conditions, and when the clip is in a
    helper function. The fix rewrites only a literal `xm.optimizer_step(...)` after the clip:
    when the step is inside another module's helper, editing the call site would change
    every backend that helper serves, so that shape is reported without a fix.

    ## Example
    ```python
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    xm.optimizer_step(optimizer)
    ```

    ## Use instead
    ```python
    loss.backward()
    xm.reduce_gradients(optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    ```

    ## References
    - torch_xla issue #1708 ("Gradient clipping is typically performed on the reduced gradients"), PR #1709 (`xm.reduce_gradients`)
    - torch_xla `torch_xla/core/xla_model.py` `optimizer_step` -> `reduce_gradients`
    - Applies to torch_xla 2.0-2.9.
    """

    code = "XLA203"
    fix_applicability = "unsafe"

    reported_at = 'the clip call (`clip_grad_norm_(...)` / `clip_grad_value_(...)`)'
    name = "clip-before-gradient-reduction"
    message = "clip_grad_norm_ before xm.optimizer_step clips unreduced gradients"
    fix = "call xm.reduce_gradients(optimizer), clip, optimizer.step()"
    severity = "E"
    versions = "2.0+"
    bad = [
        "import torch, torch_xla\nimport torch_xla.core.xla_model as xm\n"
        "def f(index, loader, model, opt):\n"
        "    for x in loader:\n"
        "        model(x).sum().backward()\n"
        "        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n"
        "        xm.optimizer_step(opt)\n"
        "torch_xla.launch(f, args=(None, None, None))\n",
    ]
    good = [
        "import torch, torch_xla\nimport torch_xla.core.xla_model as xm\n"
        "def f(index, loader, model, opt):\n"
        "    for x in loader:\n"
        "        model(x).sum().backward()\n"
        "        xm.reduce_gradients(opt)\n"
        "        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n"
        "        opt.step()\n"
        "torch_xla.launch(f, args=(None, None, None))\n",
        "import torch, torch_xla\nimport torch_xla.core.xla_model as xm\n"
        "def f(loader, model, opt):\n"
        "    for x in loader:\n"
        "        model(x).sum().backward()\n"
        "        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n"
        "        xm.optimizer_step(opt)  # one process: nothing to reduce\n",
    ]

    def check(self, model):
        if not model.launched(multi_only=True):
            return
        if model.uses_spmd() or model.uses_framework() or model.rewrapped_by_import() or model.wrap_calls("fsdp"):
            return  # SPMD, a framework, an unseen wrapper or XLA FSDP (model.clip_grad_norm_) clip their own way
        clips = model.calls_to(*CLIPS)
        if not clips:
            return
        xm_steps = model.calls_to(OPTIMIZER_STEP)
        if not any(model.in_xla_code(x) and model.is_launched(x, multi_only=True) for _, x in xm_steps) \
                and not self._helper_steps(model):
            return
        for clip, cctx in clips:
            if not model.in_xla_code(cctx) or not model.is_launched(cctx, multi_only=True) \
                    or single_replica_branch(model, cctx):
                continue
            found = None
            for at, actx in self._clip_sites(model, clip, cctx):
                found = self._clip_finding(model, clip, cctx, at, actx)
                if found is not None:
                    yield found
                    break

    @staticmethod
    def _clip_sites(model, clip, cctx) -> list:
        """Where the clip runs in a step loop: the clip itself, and when it sits in a helper of
        the module outside any loop of the helper's own (``def clip_gradients(self):
        clip_grad_norm_(...)``), each call of that helper in a loop (``self.clip_gradients()``
        in the base's step loop, before ``self.optimizer_step()``)."""
        sites = [(clip, cctx)]
        func = cctx.func
        if func is not None and not cctx.loops:
            sites.extend((c, x) for c, x in model.calls_of(func) if x.loops and x.func is not func)
        return sites

    def _clip_finding(self, model, clip, cctx, at, actx):
        """The finding for ``clip`` whose step loop position is the call ``at`` (the clip
        itself, or a call of the helper holding it), or None."""
        loop = actx.loops[-1] if actx.loops else None
        pos = (at.lineno, at.col_offset)
        steps = model.calls_after(actx.func, "xm_steps", lambda c, x: model.call_name(c, x) == OPTIMIZER_STEP
                                  or id(c) in self._helper_steps(model), pos)
        lifted = at is not clip
        for step, sctx in steps:
            if (sctx.loops[-1] if sctx.loops else None) is not loop or not model.in_xla_code(sctx):
                continue
            if not model.runs_with((at, actx), (step, sctx)) or self._wrapped(model, step, sctx):
                continue
            if self._reduced_before(model, at, actx, loop):
                continue
            opt = model.kwarg(step, "optimizer", 0)
            own = self._helper_steps(model).get(id(step))
            name = render(opt) if isinstance(opt, ast.AST) else \
                f"self.{own.self_steps[0]}" if own is not None and len(own.self_steps) == 1 else "optimizer"
            clip_name = model.call_name(clip, cctx).rsplit(".", 1)[-1]
            helper = self._helper_steps(model).get(id(step))
            if helper is not None:  # the step is another module's helper: no autofix there
                callee = render(step.func)
                callee = callee if len(callee) <= 26 else callee[:23] + "..."
                return self.finding(
                    clip, f"{clip_name} before {callee} ({helper.module.rsplit('/', 1)[-1]}: xm.optimizer_step)"
                          " clips unreduced gradients",
                    f"reduce first: xm.reduce_gradients({name}), clip, step")
            if lifted:  # (the clip is in a helper the loop calls: the step is at line N there)
                return self.finding(
                    clip, f"{clip_name} before xm.optimizer_step (line {step.lineno}) clips unreduced gradients",
                    f"reduce first: xm.reduce_gradients({name}), clip, {name}.step()")
            return self.finding(
                clip, f"{clip_name} before xm.optimizer_step clips unreduced gradients",
                f"call xm.reduce_gradients({name}), clip, {name}.step()")
        return None

    @staticmethod
    def _helper_steps(model) -> dict:
        """Project mode: id -> :class:`~flake8_xla.project.HelperFacts` of the calls of
        another project module's function or method (``backend.optimizer_step(opt)`` on a
        launched ``TPUBackend``; ``self.optimizer_step()`` that a subclass of another module
        overrides: every function the call may run, ``callee_helpers``) in launched XLA code
        that call ``xm.optimizer_step`` and no reduction (``xm.reduce_gradients``, ``xm.all_reduce``, ...) of their own: the
        reducing step of this iteration. Built once per model."""
        found = model._cache.get("xla203_helper_steps")
        if found is None:
            found = model._cache["xla203_helper_steps"] = {}
            if model.project_lookup is not None:
                for call, ctx in model.step_markers().values():
                    if not model.is_launched(ctx, multi_only=True) or not model.in_xla_code(ctx) \
                            or not model._helper_call(call, ctx):
                        continue
                    helpers = model.callee_helpers(call, ctx)  # (an override of self.m() too)
                    if helpers and all(OPTIMIZER_STEP in h.xla_calls
                                       and not any("reduce" in q.rsplit(".", 1)[-1] for q in h.xla_calls)
                                       for h in helpers):
                        found[id(call)] = helpers[0]
        return found

    @classmethod
    def _wrapped(cls, model, step, sctx) -> bool:
        """The stepped optimizer's model is DDP/FSDP-wrapped on a path with the step, or
        cannot be seen in a module that wraps some model (or reduces gradients elsewhere:
        for a helper stepping its own ``self.<optimizer>``, ``self.optimizer_step()``)."""
        opt = model.kwarg(step, "optimizer", 0)
        if not isinstance(opt, ast.AST):
            own = cls._helper_steps(model).get(id(step))
            if own is not None and own.self_steps and opt is None:
                return model.reduces_gradients_elsewhere() or bool(model.wrap_calls("ddp"))
            return True
        unknown = False
        for kind in ("ddp", "fsdp"):
            wraps = model.optimizer_wraps(opt, sctx, kind)
            if wraps is None:
                unknown = True
            elif any(not model.exclusive((step, sctx), w) for w in wraps):
                return True
        return unknown and model.reduces_gradients_elsewhere()

    @staticmethod
    def _reduced_before(model, clip, cctx, loop) -> bool:
        """A gradient reduction (``xm.reduce_gradients``, an all-reduce of gradients, a
        helper doing one) earlier in the same iteration, on a path with the clip. A previous
        ``xm.optimizer_step`` (another optimizer's) is no reduction before this clip."""
        before = model.calls_before(
            cctx.func, "grad_reductions",
            lambda c, x: model.call_name(c, x) != OPTIMIZER_STEP and reduces_gradients(model, c, x),
            (clip.lineno, clip.col_offset))
        return any((loop is None or loop in x.loops) and not model.exclusive((c, x), (clip, cctx)) for c, x in before)


@rule
class OptimizerStepBarrierMisuse(Rule):
    """## What it does
    Flags `xm.optimizer_step(optimizer, barrier=True)` (the keyword, or `True` as the
    second positional argument) in the body of a loop that iterates a
    `pl.MpDeviceLoader` / `ParallelLoader(...).per_device_loader(...)` (also through
    `enumerate`, names, and a function parameter every caller in the module fills with
    one), or in a helper only such loops call. Reported at the `xm.optimizer_step` call.

    ## Why is this bad?
    The device loader already cuts the graph (`torch_xla.sync()`) every time it yields
    the next batch. `barrier=True` adds a second sync per step: the step's graph is cut
    at the optimizer step, and whatever the iteration does after it (a scheduler step,
    loss bookkeeping) runs as a second, separate graph at the loader's cut. The
    `optimizer_step` docstring: with the XLA data loader "this is not necessary as the
    barrier will be issued by the XLA data loader iterator".

    ## Known problems
    A plain `DataLoader` loop is not reported: there `barrier=True` is the fix (without
    it nothing syncs per step; XLA301/XLA302). Not reported inside an inner loop of the
    device-loader loop (several steps per batch need their own cut), when what the loop
    iterates cannot be seen (also a loader wrapped in `MpDeviceLoader` only under a flag,
    `if flags.mp_loader:`, that may still be the plain one; under the XLA test itself it is
    the device loader), or for a call without its optimizer (XLA809 reports it, and
    its fix `xm.optimizer_step(optimizer)` drops the barrier too).

    ## Example
    ```python
    for x, y in pl.MpDeviceLoader(loader, device):
        loss_fn(model(x), y).backward()
        xm.optimizer_step(optimizer, barrier=True)
    ```

    ## Use instead
    ```python
    for x, y in pl.MpDeviceLoader(loader, device):
        loss_fn(model(x), y).backward()
        xm.optimizer_step(optimizer)
    ```

    ## References
    - torch_xla `torch_xla/core/xla_model.py` `optimizer_step` docstring (`barrier`, "not necessary" with the XLA data loader)
    - torch_xla `torch_xla/distributed/parallel_loader.py` (`PerDeviceLoader.next` calls `torch_xla.sync()`)
    - torch_xla `docs/source/learn/xla-advanced.md` "Data Loading"
    - Applies to torch_xla 2.0-2.9.
    """

    code = "XLA204"
    reported_at = 'the `xm.optimizer_step(...)` call'
    name = "optimizer-step-barrier-misuse"
    message = "barrier=True in a loop over a device loader, which already syncs every batch"
    fix = "drop barrier=True"
    severity = "W"
    versions = "2.0+"
    bad = [
        "import torch_xla\nimport torch_xla.core.xla_model as xm\nimport torch_xla.distributed.parallel_loader as pl\n"
        "def f(loader, model, opt, dev):\n"
        "    for x in pl.MpDeviceLoader(loader, dev):\n"
        "        model(x).sum().backward()\n"
        "        xm.optimizer_step(opt, barrier=True)\n",
    ]
    good = [
        "import torch_xla\nimport torch_xla.core.xla_model as xm\nfrom torch.utils.data import DataLoader\n"
        "def f(ds, model, opt):\n"
        "    for x in DataLoader(ds, batch_size=8):\n"
        "        model(x).sum().backward()\n"
        "        xm.optimizer_step(opt, barrier=True)\n",
    ]

    def check(self, model):
        helpers: dict[int, bool] = {}  # id(function) -> _helper_of_device_loops, once per function
        for call, ctx in model.calls_to(OPTIMIZER_STEP):
            if model.const(model.kwarg(call, "barrier", 1), ctx) is not True or not model.in_xla_code(ctx):
                continue
            if model.kwarg(call, "optimizer", 0) is None:
                continue  # cannot bind: XLA809's fix, xm.optimizer_step(optimizer), drops the barrier too
            if ctx.loops:
                if model.iterates_device_loader(ctx.loops[-1]):
                    yield self.finding(call)
            elif ctx.func is not None:
                if id(ctx.func) not in helpers:
                    helpers[id(ctx.func)] = self._helper_of_device_loops(model, ctx.func)
                if helpers[id(ctx.func)]:
                    yield self.finding(call)

    @staticmethod
    def _helper_of_device_loops(model, func) -> bool:
        """Every call of ``func`` in the module sits directly in a device-loader loop body."""
        calls = model.calls_of(func)
        return bool(calls) and all(x.loops and model.iterates_device_loader(x.loops[-1]) for _, x in calls)


def _per_rank(model, expr, ctx, depth=0) -> bool:
    """``expr`` depends on the replica's rank: a rank value (``rank``, ``xr.global_ordinal()``,
    the launched function's index), arithmetic on one, or a name bound to such."""
    if depth > 4 or not isinstance(expr, ast.AST):
        return False
    if is_rank_value(model, expr, ctx):
        return True
    t = type(expr)
    if t is ast.BinOp:
        return _per_rank(model, expr.left, ctx, depth + 1) or _per_rank(model, expr.right, ctx, depth + 1)
    if t is ast.Name:
        values = model.values(expr, ctx)
        return bool(values) and any(_per_rank(model, v, c, depth + 1) for v, c in values if v is not None)
    if t is ast.Call and type(expr.func) is ast.Name and expr.func.id == "int" and expr.args:
        return _per_rank(model, expr.args[0], ctx, depth + 1)
    return False


def _loads_with(model, build, load) -> bool:
    """``load`` runs whenever ``build`` does: in the same function under no condition the
    build is not under, or in another function the build's function reaches (unknown: it
    may well run)."""
    if build[1].func is not load[1].func:
        return True
    return not model.exclusive(build, load) and model.branch_frames(load[1]) <= model.branch_frames(build[1])


def _not_weights(model, expr, ctx) -> bool:
    """An optimizer, scheduler or scaler: its ``load_state_dict`` restores no weights."""
    ident = expr.id if type(expr) is ast.Name else expr.attr if type(expr) is ast.Attribute else ""
    return model.is_optimizer(expr, ctx) or any(w in ident.lower() for w in ("sched", "scaler"))


def _native_reduction(model) -> bool:
    """The module averages gradients itself somewhere in XLA code, with no wrapper that
    broadcasts the weights: ``xm.optimizer_step``, ``xm.reduce_gradients`` (+ ``opt.step()``),
    or an all-reduce of the gradients (``xm.all_reduce(..., [p.grad ...])``,
    ``dist.all_reduce(p.grad)``), also inside a compiled step."""
    return any(model.in_xla_code(x) and reduces_visible_gradients(model, c, x)
               for c, x in model.calls_to(OPTIMIZER_STEP, *GRADIENT_REDUCERS, *REDUCED_ARG))


@rule
class DivergentReplicaInit(Rule):
    """## What it does
    Flags `torch.manual_seed(...)` given a per-rank seed (`base + rank`,
    `xr.global_ordinal()`, the index the launcher passes, a name bound to such) in code
    started by a multi-process XLA launcher, when a model is built after it in the same
    function and the replicas average their gradients themselves (`xm.optimizer_step`,
    `xm.reduce_gradients` + `opt.step()`, an all-reduce of the gradients such as
    `xm.all_reduce(xm.REDUCE_SUM, [p.grad ...])` or `dist.all_reduce(p.grad)`, also in a
    `torch_xla.compile`d step), with no DDP and no parameter broadcast. Reported at the seed.

    ## Why is this bad?
    A per-rank seed gives every replica different initial weights. Native XLA data
    parallel averages the gradients but never synchronises the weights: every replica
    applies the same averaged update to its own different model, forever. DDP would
    broadcast rank 0's weights when it wraps the model; without it,
    `xm.broadcast_master_param(model)` does (even the same seed is not enough with the
    threads of TPU v2/v3, the torch_xla reference scripts broadcast).

    ## Known problems
    Not reported with DDP, XLA FSDP, SPMD or a training framework in the module, with a
    parameter broadcast (`xm.broadcast_master_param`, `torch.distributed.broadcast`,
    `xm.collective_broadcast`) anywhere in the module, when weights are loaded whenever the
    model is built (`load_state_dict`, `from_pretrained`, `load_checkpoint` of a module in
    the same function under no further condition, or in a function it calls; a load only
    on resume, `if os.path.exists(ckpt):`, leaves a fresh run divergent and is reported), when
    the seed comes after the model is built (it then varies only data order and dropout,
    which is fine), when the model comes from a module built in the parent
    (`MpModelWrapper`) or from a method whose result cannot be seen, or without a
    launcher. A module helper that seeds with its parameter (`seed_all(cfg.seed + rank)`)
    is reported at the call that passes the per-rank value; imported seeders
    (`transformers.set_seed`, `accelerate.utils.set_seed`, Lightning's `seed_everything`)
    count as `torch.manual_seed`. The suggested `xm.broadcast_master_param` exists from
    torch_xla 2.1; for `--xla-version=2.0` the message names
    `torch_xla.experimental.pjrt.broadcast_master_param`.

    ## Example
    ```python
    def _mp_fn(index):
        torch.manual_seed(1337 + index)
        model = GPT(config).to(torch_xla.device())
    ```

    ## Use instead
    ```python
    def _mp_fn(index):
        torch.manual_seed(1337)
        model = GPT(config).to(torch_xla.device())
        xm.broadcast_master_param(model)
    ```

    ## References
    - torch_xla `test/test_train_mp_mnist.py` ("Initialization is nondeterministic with multiple
      threads in PjRt. Synchronize model parameters across replicas manually.")
    - torch_xla `docs/source/learn/_pjrt.md` "Multithreading on TPU v2/v3"
    - torch_xla `torch_xla/core/xla_model.py` `broadcast_master_param` (2.1+; 2.0: `torch_xla/experimental/pjrt.py`)
    - Applies to torch_xla 2.0-2.9.
    """

    code = "XLA205"
    reported_at = 'the per-rank `torch.manual_seed(...)` call (or the call of a module helper that seeds with a per-rank argument)'
    name = "divergent-replica-init"
    message = "per-rank seed: replicas build different initial weights"
    fix = "call xm.broadcast_master_param(model) after building it"
    severity = "E"
    versions = "2.0+ (xm.broadcast_master_param 2.1+)"
    bad = [
        "import torch, torch_xla\nimport torch_xla.core.xla_model as xm\n"
        "def f(index, loader):\n"
        "    torch.manual_seed(1337 + index)\n"
        "    model = torch.nn.Linear(4, 2).to(torch_xla.device())\n"
        "    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "    for x in loader:\n"
        "        model(x).sum().backward()\n"
        "        xm.optimizer_step(opt)\n"
        "torch_xla.launch(f, args=(None,))\n",
    ]
    good = [
        "import torch, torch_xla\nimport torch_xla.core.xla_model as xm\n"
        "def f(index, loader):\n"
        "    torch.manual_seed(1337 + index)\n"
        "    model = torch.nn.Linear(4, 2).to(torch_xla.device())\n"
        "    xm.broadcast_master_param(model)\n"
        "    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "    for x in loader:\n"
        "        model(x).sum().backward()\n"
        "        xm.optimizer_step(opt)\n"
        "torch_xla.launch(f, args=(None,))\n",
    ]

    def check(self, model):
        if not model.launched(multi_only=True) or model.reduces_gradients_elsewhere() or not _native_reduction(model):
            return
        if any(model.in_xla_code(x) for _, x in model.calls_to(*BROADCASTS)) or model.helper_calls_any(BROADCASTS):
            return  # (also a helper of another module: broadcast_init(model))
        loads = [(c, x) for c, x in model.calls if type(c.func) is ast.Attribute and c.func.attr in _LOADS
                 and not _not_weights(model, c.func.value, x)]
        fix = None
        entry = api_table.introduced(BROADCAST_MASTER_PARAM)
        if self.settings.target_version < api_table.vtuple(entry["since"]):
            fix = f"call {entry['before']} after building it"
        reported: set[int] = set()
        for call, ctx in model.calls_to(*TORCH_SEEDS, *SEED_HELPERS):
            if not (model.in_xla_code(ctx) and model.is_launched(ctx, multi_only=True)):
                continue
            seed = model.kwarg(call, "seed", 0)
            if not isinstance(seed, ast.AST):
                continue
            if _per_rank(model, seed, ctx):
                if self._model_built_after(model, call, ctx, loads):
                    yield self.finding(call, None, fix)
                continue
            # seed_all(cfg.seed + rank): a module helper seeding with its parameter
            for site, sctx in self._helper_sites(model, seed, ctx):
                if id(site) not in reported and self._model_built_after(model, site, sctx, loads):
                    reported.add(id(site))
                    yield self.finding(site, None, fix)

    @staticmethod
    def _helper_sites(model, seed, ctx) -> list:
        """The calls of the module function the seed sits in that pass it a per-rank value
        for the parameter the seed is (``seed_all(cfg.seed + index)``), in launched XLA code."""
        func = ctx.func
        if type(seed) is not ast.Name or func is None or seed.id not in func.params:
            return []
        bindings = model.lookup(seed.id, ctx, seed.lineno)
        if not bindings or any(kind != "param" for _, kind, _, _ in bindings):
            return []
        out = []
        for call, cctx in model.calls_of(func):
            arg = model.argument_for(call, cctx, func, seed.id)
            if isinstance(arg, ast.AST) and model.in_xla_code(cctx) and model.is_launched(cctx, multi_only=True) \
                    and _per_rank(model, arg, cctx):
                out.append((call, cctx))
        return out

    @staticmethod
    def _model_built_after(model, seed, ctx, loads) -> bool:
        """A module is built after the seed in the same function, on a path with it, and no
        weights are loaded whenever that build runs (a checkpoint makes the replicas alike;
        one loaded only on resume leaves a fresh run divergent)."""
        reach = model.reachable_from(ctx.func)
        loads = [(c, x) for c, x in loads if x.func is not None and id(x.func) in reach]
        if len(loads) > 32:
            return False  # generated code: many loads, assume one covers the build
        builds = model.calls_after(ctx.func, "builds", model.builds_model, (seed.lineno, seed.col_offset))
        return any(not model.exclusive((seed, ctx), b) and not any(_loads_with(model, b, ld) for ld in loads)
                   for b in builds)


RANDOM_FACTORIES = frozenset("torch." + n for n in (
    "rand", "randn", "randint", "randperm", "normal", "bernoulli", "multinomial", "poisson"))
RANDOM_LIKE = frozenset("torch." + n for n in ("rand_like", "randn_like", "randint_like"))
RANDOM_METHODS = frozenset({"uniform_", "normal_", "bernoulli_", "random_", "exponential_", "geometric_",
                            "log_normal_", "cauchy_", "bernoulli", "multinomial"})
_RANDOM_CALLS = RANDOM_FACTORIES | RANDOM_LIKE | DROPOUT_FUNCTIONS | DROPOUT_MODULES


def _positive(value) -> bool:
    return type(value) in (int, float) and value > 0


def _device_randomness(model) -> list:
    """The calls in XLA code that draw random numbers on the XLA device: a random factory
    with ``device=`` the XLA device, ``rand_like`` / an in-place random method on a device
    tensor, dropout on a device tensor, or dropout (``nn.Dropout(p)`` / ``F.dropout``) in
    a module class whose instances are moved to a device (or that such a class builds), in
    a file that trains in XLA code."""
    if "device_random" in model._cache:
        return model._cache["device_random"]
    out = []
    trains = None
    for call, ctx in model.calls:
        q = model.call_name(call, ctx)
        f = call.func
        if q is None:
            if type(f) is ast.Attribute and f.attr in RANDOM_METHODS and model.in_xla_code(ctx) \
                    and model.tensor_kind(f.value, ctx) == "device":
                out.append((call, ctx))
            continue
        if q not in _RANDOM_CALLS or not model.in_xla_code(ctx):
            continue
        if q in RANDOM_FACTORIES:
            if model._factory_kind(call, ctx) == "device":
                out.append((call, ctx))
        elif q in RANDOM_LIKE:
            if call.args and model.tensor_kind(call.args[0], ctx) == "device":
                out.append((call, ctx))
        elif q in DROPOUT_FUNCTIONS or q in DROPOUT_MODULES:
            training = model.kwarg(call, "training", 2 if q in DROPOUT_FUNCTIONS else None)
            p = model.kwarg(call, "p", 1 if q in DROPOUT_FUNCTIONS else 0)
            if model.const(training, ctx) is False:
                continue
            if p is not None and not _positive(model.const(p, ctx)):
                continue  # p=0, or a rate that cannot be seen (config.dropout may be 0.0)
            if q in DROPOUT_FUNCTIONS and call.args and model.tensor_kind(call.args[0], ctx) == "device":
                out.append((call, ctx))
                continue
            cls = ctx.func.cls if ctx.func is not None else None
            if cls is not None and model.is_module_class(cls) \
                    and any(id(c) in model.classes_on_device() for c in model.mro(cls)):
                if trains is None:
                    trains = any(model.in_xla_code(lp.ctx) and model.is_step_loop(lp) for lp in model.loops)
                if trains:
                    out.append((call, ctx))
    model._cache["device_random"] = out
    return out


def _reaches_randomness(model, targets) -> dict:
    """``id(function) -> True`` for the module functions that draw device random numbers
    themselves or call (or instantiate the class of) one that does, followed
    :attr:`HELPER_DEPTH` levels; built once."""
    table = model._cache.get("random_reach")
    if table is not None:
        return table
    direct = {id(x.func): True for _, x in targets if x.func is not None}
    callers: dict[int, list] = {}
    for f in model.functions:
        for g in model._direct_callees(f) + _instantiated_methods(model, f.calls):
            callers.setdefault(id(g), []).append(f)
    return model.closure_over_callers("random_reach", direct, callers)


def _instantiated_methods(model, calls) -> list:
    """The methods of the module classes that ``Cls(...)`` calls among ``calls`` construct."""
    out = []
    for c, x in calls:
        if type(c.func) is ast.Name:
            cls = model.class_named(c.func.id, x)
            if cls is not None:
                out.extend(model._class_methods(cls))
    return out


def _runs_after(model, seed, ctx, targets) -> bool:
    """One of ``targets`` (``(call, ctx)``) runs after ``seed``: later in the same function
    (or at module level) on a path with it, or in a module function (or a method of a
    class) that a later call there reaches."""
    table = _reaches_randomness(model, targets)
    ids = model._cache.get("random_ids")
    if ids is None:
        ids = model._cache["random_ids"] = {id(c) for c, _ in targets}

    def reaches(c, x):
        return id(c) in ids or any(table.get(id(g)) for g in model.function_of(c.func, x)) \
            or any(table.get(id(g)) for g in _instantiated_methods(model, [(c, x)]))

    later = model.calls_after(ctx.func, "random_after", reaches, (seed.lineno, seed.col_offset))
    return any(not model.exclusive((seed, ctx), (c, x)) for c, x in later)


#: seeders of other generators than the XLA device's (``np.random.seed``, ``random.seed``,
#: ``torch.cuda.manual_seed_all``): not an imported helper that may seed the device too
_HOST_SEEDERS = ("numpy.", "random.", "torch.")


@rule
class DeviceRngNotSeeded(Rule):
    """## What it does
    Flags `torch.manual_seed(...)` in XLA code when the module draws random numbers on
    the XLA device (`torch.rand(..., device=torch_xla.device())`, `rand_like` or an
    in-place random method of a device tensor, dropout on a device tensor or in a module
    class whose instances are moved to the device in a file that trains in XLA code, with
    a visible non-zero rate) and never seeds the device generator
    (`torch_xla.manual_seed` / `xm.set_rng_state`). A hint, reported at the seed.

    ## Why is this bad?
    The XLA device has its own random generator; `torch.manual_seed` seeds only the CPU
    one (and CUDA's). Random numbers drawn on the device (dropout masks, noise, random
    tensors) ignore the seed: changing it does not change them, and runs the seed was
    meant to make reproducible or different are not.

    ## Known problems
    Not reported when the module calls `torch_xla.manual_seed` / `xm.set_rng_state`
    anywhere, or a seeding helper imported from another package (`set_seed`,
    `seed_everything`: Accelerate's and Transformers' seed the XLA generator too; NumPy's,
    `random`'s and torch's own seeders do not, nor a helper of the project whose code calls
    no XLA seeder), or a helper of the project, whatever its name, whose code (or a function
    it calls) calls one (`setup_device(seed)`), when all randomness
    visibly happens on the CPU (a model initialised before `.to(device)`, CPU data
    augmentation), or when the device randomness cannot be seen (dropout inside a model
    built by a library). In project mode the dropout may be in another module: a class
    with dropout (a rate visibly above zero, also a constant of a config module) that the
    launched code builds (also a block such a class builds) makes every seed of the modules it reaches count, the launching script's own too. `torch_xla.manual_seed` exists from torch_xla 2.5; for older
    targets the message suggests `xm.set_rng_state(seed)`.

    ## Example
    ```python
    torch.manual_seed(0)
    noise = torch.randn(8, 16, device=torch_xla.device())
    ```

    ## Use instead
    ```python
    torch.manual_seed(0)
    torch_xla.manual_seed(0)      # 2.5+; before: xm.set_rng_state(0)
    noise = torch.randn(8, 16, device=torch_xla.device())
    ```

    ## References
    - torch_xla `torch_xla/torch_xla.py` `manual_seed` ("Set the seed for generating random numbers for the current XLA device", 2.5+)
    - torch_xla `torch_xla/core/xla_model.py` `set_rng_state` / `get_rng_state`
    - Applies to torch_xla 2.0-2.9.
    """

    code = "XLA206"
    hint = True

    reported_at = 'the `torch.manual_seed(...)` call'
    name = "device-rng-not-seeded"
    message = "torch.manual_seed does not seed the XLA device RNG"
    fix = "also call torch_xla.manual_seed(seed)"
    severity = "C"
    versions = "2.0+ (torch_xla.manual_seed 2.5+)"
    bad = [
        "import torch, torch_xla\n"
        "torch.manual_seed(0)\n"
        "noise = torch.randn(8, 16, device=torch_xla.device())\n",
    ]
    good = [
        "import torch, torch_xla\n"
        "torch.manual_seed(0)\ntorch_xla.manual_seed(0)\n"
        "noise = torch.randn(8, 16, device=torch_xla.device())\n",
        "import torch, torch_xla\n"
        "torch.manual_seed(0)\n"
        "noise = torch.randn(8, 16).to(torch_xla.device())  # drawn on the CPU\n",
    ]

    def check(self, model):
        seeds = [(c, x) for c, x in model.calls_to(*TORCH_SEEDS) if model.in_xla_code(x)]
        if not seeds or any(model.in_xla_code(x) for _, x in model.calls_to(*XLA_SEEDS)):
            return
        randomness = _device_randomness(model)
        elsewhere = not randomness and model.project_setup is not None and model.project_setup.device_random
        if not (randomness or elsewhere) or self._imported_seeder(model):
            return
        entry = api_table.introduced(TORCH_XLA_MANUAL_SEED)
        new = self.settings.target_version >= api_table.vtuple(entry["since"])
        for call, ctx in seeds:
            if not elsewhere and not _runs_after(model, call, ctx, randomness):
                continue  # (randomness in another module: the seed is set up before the model runs)
            seed = model.kwarg(call, "seed", 0)
            text = source_text(seed, 24) if isinstance(seed, ast.AST) else "seed"
            fix = f"also call torch_xla.manual_seed({text})" if new else f"also call xm.set_rng_state({text})"
            yield self.finding(call, None, fix)

    @staticmethod
    def _imported_seeder(model) -> bool:
        for call, ctx in model.calls:
            q = model.call_name(call, ctx)
            f = call.func
            ident = f.id if type(f) is ast.Name else f.attr if type(f) is ast.Attribute else ""
            if q in TORCH_SEEDS or (q or "").startswith(_HOST_SEEDERS) or not model._imported_helper(call, ctx):
                continue
            helper = model.project_helper(f, ctx) if model.project_lookup is not None else None
            if helper is not None:  # a helper of this project: whatever its name, does it seed the device?
                if any(x in XLA_SEEDS for x in helper.xla_calls):
                    return True  # (setup_device(seed) calling torch_xla.manual_seed)
                continue
            if "seed" in ident.lower():
                return True  # another package's seeder (Accelerate's set_seed seeds the XLA generator)
        return False
