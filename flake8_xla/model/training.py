"""Training loops, syncs and reductions: optimizers, backward passes and optimizer steps,
step loops, per-step graph cuts (``torch_xla.sync``, ``mark_step``, ``barrier=True``,
compiled steps), and what in the module reduces gradients by itself (DDP, FSDP, SPMD).
"""

from __future__ import annotations

import ast
import re

from .scopes import Ctx, FunctionInfo, LoopInfo


class Training:
    """Mixin of :class:`~flake8_xla.model.Model`; see the module docstring."""

    _OPT_NAME = re.compile(r"^(?:.*_)?(?:opt|optim|optimizer|optimiser|optimizers)(?:_\w+|\d+)?$", re.I)

    def is_optimizer(self, expr: ast.AST, ctx: Ctx) -> bool:
        """True when ``expr`` holds a torch optimizer (constructed from ``torch.optim`` or so named)."""
        values = self.resolve_values(expr, ctx)
        if values:
            kinds = set()
            for v, c in values:
                q = self.call_name(v, c) if type(v) is ast.Call else None
                if q is None:
                    kinds.add("unknown")
                elif q.startswith("torch.optim.lr_scheduler") or "scheduler" in q.lower():
                    kinds.add("scheduler")
                elif q.startswith(("torch.optim.", "torch_xla.amp.syncfree.", "torch.distributed.optim.",
                                   "torch_xla.distributed.zero_redundancy_optimizer.")):
                    kinds.add("optimizer")
                else:
                    kinds.add("unknown")
            if kinds == {"optimizer"}:
                return True
            if "scheduler" in kinds:
                return False
        t = type(expr)
        ident = expr.id if t is ast.Name else expr.attr if t is ast.Attribute else None
        return bool(ident) and "sched" not in ident.lower() and bool(self._OPT_NAME.match(ident))

    def is_backward(self, call: ast.Call, ctx: Ctx) -> bool:
        f = call.func
        if type(f) is ast.Attribute and f.attr == "backward":
            return True
        return self.call_name(call, ctx) == "torch.autograd.backward"

    def is_optimizer_step(self, call: ast.Call, ctx: Ctx) -> bool:
        """``optimizer.step()`` on a torch optimizer (not ``xm.optimizer_step``)."""
        f = call.func
        return type(f) is ast.Attribute and f.attr == "step" and self.is_optimizer(f.value, ctx)

    def _is_step_marker(self, call, ctx):
        return (self.is_backward(call, ctx) or self.is_optimizer_step(call, ctx)
                or self.call_name(call, ctx) in ("torch_xla.core.xla_model.optimizer_step",
                                                 "torch_xla.core.xla_model.reduce_gradients"))

    def does_step(self, func: FunctionInfo) -> bool:
        """True when ``func`` (or a module function it calls) runs backward or an optimizer step."""
        table = self._cache.get("does_step")
        if table is None:
            direct = {id(f): any(self._is_step_marker(c, x) for c, x in f.calls) for f in self.functions}
            # propagate to callers until nothing changes (bounded by the number of functions)
            changed = True
            rounds = 0
            while changed and rounds <= len(self.functions):
                changed = False
                rounds += 1
                for f in self.functions:
                    if not direct[id(f)] and any(direct.get(id(g)) for g in self._direct_callees(f)):
                        direct[id(f)] = True
                        changed = True
            table = self._cache["does_step"] = direct
        return table.get(id(func), False)

    def _direct_callees(self, func: FunctionInfo) -> list[FunctionInfo]:
        key = ("dcallees", id(func))
        if key not in self._cache:
            out = []
            for call, ctx in func.calls:
                out.extend(self.function_of(call.func, ctx))
            self._cache[key] = out
        return self._cache[key]

    def is_step_loop(self, loop: LoopInfo) -> bool:
        """A loop whose body (or a module function it calls) runs backward or an optimizer step."""
        key = ("steploop", id(loop))
        if key not in self._cache:
            result = False
            for call, ctx in loop.calls:
                if self._is_step_marker(call, ctx) or any(self.does_step(f) for f in self.function_of(call.func, ctx)):
                    result = True
                    break
            self._cache[key] = result
        return self._cache[key]

    def loop_of(self, node: ast.AST) -> LoopInfo | None:
        for loop in self.loops:
            if loop.node is node:
                return loop
        return None

    SYNCS = ("torch_xla.sync", "torch_xla.core.xla_model.mark_step", "torch_xla.step",
             "torch_xla._XLAC._xla_step_marker", "torch_xla.debug.profiler.StepTrace")

    def loop_syncs(self, loop: LoopInfo) -> bool:
        """True when the loop body cuts the graph each iteration (sync, mark_step, barrier=True, step())."""
        for call, ctx in loop.calls:
            q = self.call_name(call, ctx)
            if q in self.SYNCS:
                return True
            if q == "torch_xla.core.xla_model.optimizer_step":
                if self.const(self.kwarg(call, "barrier", 1), ctx) is True:
                    return True
            for f in self.function_of(call.func, ctx):
                if any(self.call_name(c, x) in self.SYNCS for c, x in f.calls):
                    return True
                if any(self.qualname(d.func if type(d) is ast.Call else d, f.ctx) in self.COMPILERS
                       for d in f.node.decorator_list):
                    return True  # @torch_xla.compile syncs before and after the step
            if q is None and type(call.func) in (ast.Name, ast.Attribute):
                values = self.values(call.func, ctx)  # step = torch_xla.compile(step_fn)
                if values and all(type(v) is ast.Call and self.call_name(v, c) in self.COMPILERS for v, c in values):
                    return True
        return False

    COMPILERS = ("torch_xla.compile",)

    REDUCING_WRAPPERS = (
        "torch.nn.parallel.DistributedDataParallel",
        "torch_xla.distributed.fsdp.XlaFullyShardedDataParallel",
        "torch_xla.distributed.spmd.SpmdFullyShardedDataParallel",
        "torch_xla.experimental.spmd_fully_sharded_data_parallel",
        "torch_xla.distributed.zero_redundancy_optimizer.ZeroRedundancyOptimizer",
        "torch_xla.distributed.spmd",
        "torch_xla.experimental.xla_sharding",
        "torch_xla.runtime.use_spmd",
        "torch.distributed.fsdp",
        "torch.distributed._composable.fsdp",
        "torch.distributed.optim.ZeroRedundancyOptimizer",
        "torch.distributed.algorithms",
    )
    _FRAMEWORKS = ("accelerate", "lightning", "pytorch_lightning", "transformers.Trainer",
                   "transformers.trainer", "ignite", "composer")

    def reduces_gradients_elsewhere(self) -> bool:
        """True when the module uses something that reduces gradients itself.

        DDP, XLA FSDP, FSDPv2 / SPMD (``xr.use_spmd``, ``torch_xla.distributed.spmd``),
        ZeRO-1, torch FSDP, a training framework (Accelerate, Lightning, HF Trainer), or
        ``XLA_USE_SPMD`` in the environment.
        """
        if "reduces" not in self._cache:
            self._cache["reduces"] = self.uses_spmd() or any(
                q.startswith(self.REDUCING_WRAPPERS) or q.startswith(self._FRAMEWORKS) for q in self.used_names())
        return self._cache["reduces"]

    def used_names(self) -> list[str]:
        """Every dotted name the module imports or reaches through torch / torch_xla chains."""
        if "used_names" not in self._cache:
            names = [q for _, q, _ in self.references("torch")] + [q for _, q, _ in self.references("torch_xla")]
            names += [full for _, _, full, _ in self.imports + self.import_froms]
            self._cache["used_names"] = names
        return self._cache["used_names"]

    def uses_spmd(self) -> bool:
        """SPMD: ``xr.use_spmd()``, ``torch_xla.distributed.spmd`` (or the old
        ``experimental.xla_sharding``), or ``XLA_USE_SPMD`` set in the environment."""
        if "spmd" not in self._cache:
            self._cache["spmd"] = any(
                q == "torch_xla.runtime.use_spmd" or q.startswith(("torch_xla.distributed.spmd",
                                                                   "torch_xla.experimental.xla_sharding"))
                for q in self.used_names()) or any(key == "XLA_USE_SPMD" for key, _, _, _ in self.env_writes())
        return self._cache["spmd"]
