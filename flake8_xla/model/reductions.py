"""Gradient reductions: the calls that all-reduce gradients across replicas (what XLA201
counts as a reduction before an optimizer step, and what project summaries record), and
what reduces them without a visible call (wrappers, SPMD, training frameworks).

- :meth:`Reductions.reduces_gradients_elsewhere`: DDP, FSDP, ZeRO named in XLA code, SPMD,
  a training framework's object, a model re-wrapped by an imported helper, an in-house
  reducer; :meth:`~Reductions.uses_spmd`, :meth:`~Reductions.uses_framework`.
- :func:`reduces_gradients`: ``xm.reduce_gradients(opt)`` / ``xm.optimizer_step(opt)``, a
  collective over gradients, a module helper doing one of those, or an imported helper
  whose name says it reduces.
- :func:`reduces_directly`: the same for the call itself, helpers not followed.
- :func:`reduces_visible_gradients`: a call that visibly reduces gradients (unknown does not count).

The two functions take the module's :class:`~flake8_xla.model.Model` first and memoise in its
``_cache``. What cannot be seen counts as a reduction (unknown never fires).
"""

from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING

from .names import canonical
from .scopes import UNKNOWN, Ctx

if TYPE_CHECKING:  # the facade imports the model's modules: annotations only
    from . import Model

GRADIENT_REDUCERS = (
    "torch_xla.core.xla_model.reduce_gradients",
    "torch_xla.core.xla_model.all_reduce_bucketized_gradients",
)
OPTIMIZER_STEP = "torch_xla.core.xla_model.optimizer_step"
_MAYBE_REDUCER = ("reduce", "all_reduce", "allreduce", "sync_grad", "average_grad", "grad_sync")
#: collectives and the argument (keyword, position) holding what they reduce
REDUCED_ARG = {
    "torch_xla.core.xla_model.all_reduce": ("inputs", 1),
    "torch_xla.core.xla_model.reduce_scatter": ("input", 1),
    "torch.distributed.all_reduce": ("tensor", 0),
    "torch.distributed.reduce_scatter": ("input_list", 1),
}


def reduces_gradients(model: Model, call: ast.Call, ctx: Ctx) -> bool:
    """``xm.reduce_gradients(opt)`` / ``xm.optimizer_step(opt)``, a collective over
    gradients (``p.grad``, a list of them, a tensor built from them; what cannot be seen
    counts too), a module helper that does one of those at any (bounded) depth, or an
    imported non-torch helper whose name says it reduces (``allreduce_gradients(model)``:
    unknown, so not a finding). What is reduced decides, never a variable's name: an
    all-reduced grad norm reduces nothing."""
    if reduces_directly(model, call, ctx):
        return True
    if model.call_name(call, ctx) is not None:
        return False
    table = model._cache.get("reducing_funcs")
    if table is None:
        direct = {id(f): any(reduces_directly(model, c, x) for c, x in f.calls) for f in model.functions}
        table = model.closure_over_callers("reducing_funcs", direct)
    if any(table.get(id(f)) for f in model.function_of(call.func, ctx)):
        return True
    if type(call.func) in (ast.Name, ast.Subscript, ast.Call) and model.unknown_callee(call, ctx) \
            and any(type(a) in (ast.Name, ast.Attribute) and model.is_optimizer(a, ctx) for a in call.args):
        return True  # reduce = REDUCERS["xla"]; reduce(opt): what it runs on the optimizer cannot be seen
    if model.project_lookup is not None and type(call.func) is ast.Attribute:
        # project mode: a method of another module the call may run reduces (the override
        # `self.reduce_gradients(opt)` dispatches to: xm.reduce_gradients in a TPU subclass)
        helpers = model.callee_helpers(call, ctx)
        if helpers and any(h.xla_calls & _HELPER_REDUCERS for h in helpers):
            return True
    return False


#: the torch_xla calls that make a project helper a gradient reduction
_HELPER_REDUCERS = frozenset(GRADIENT_REDUCERS) | {OPTIMIZER_STEP}


def reduces_directly(model: Model, call: ast.Call, ctx: Ctx) -> bool:
    """``call`` itself reduces gradients: ``xm.reduce_gradients``,
    ``xm.all_reduce_bucketized_gradients``, ``xm.optimizer_step`` (it reduces, then steps),
    a collective (``xm.all_reduce``, ``dist.all_reduce``, ...) whose reduced argument holds
    or may hold gradients, or a call of a non-torch name that says it reduces. Module
    helpers are not followed (:func:`reduces_gradients` follows them)."""
    q = model.call_name(call, ctx)
    if q is None:
        return False
    if q in GRADIENT_REDUCERS or q == OPTIMIZER_STEP:  # optimizer_step reduces, then steps
        return True
    if q in REDUCED_ARG:
        arg = model.kwarg(call, *REDUCED_ARG[q])
        return arg is UNKNOWN or (arg is not None and _gradients(model, arg, ctx) is not False)
    return not q.startswith(("torch.", "torch_xla.")) and any(w in q.rsplit(".", 1)[-1].lower() for w in _MAYBE_REDUCER)


def reduces_visible_gradients(model: Model, call: ast.Call, ctx: Ctx) -> bool:
    """``call`` visibly averages gradients across replicas: ``xm.reduce_gradients``,
    ``xm.all_reduce_bucketized_gradients``, ``xm.optimizer_step``, or a collective
    (``xm.all_reduce``, ``dist.all_reduce``, ...) whose reduced argument holds gradients
    (``[p.grad for p in ...]``, ``p.grad``). Unlike :func:`reduces_directly`, what cannot
    be seen does not count (for rules that fire on a reduction)."""
    q = model.call_name(call, ctx)
    if q in GRADIENT_REDUCERS or q == OPTIMIZER_STEP:
        return True
    if q in REDUCED_ARG:
        arg = model.kwarg(call, *REDUCED_ARG[q])
        return isinstance(arg, ast.AST) and _gradients(model, arg, ctx) is True
    return False


def _gradients(model, expr, ctx):
    """Whether ``expr`` holds gradients: True (``p.grad``, ``[p.grad for p in ...]``,
    ``torch.cat([p.grad.view(-1) ...])``, through names and module helpers' returns), False
    (visibly something else: a loss, a norm from ``clip_grad_norm_``, a constant), None
    (cannot be seen: a parameter, a loop variable, an unknown callable's result)."""
    key = ("grads", id(expr))
    if key in model._cache:
        return model._cache[key]
    model._cache[key] = None  # cycles: unknown
    result = _gradients_uncached(model, expr, ctx)
    model._cache[key] = result
    return result


def _combine(results):
    results = list(results)
    if True in results:
        return True
    return None if None in results else False


def _gradients_uncached(model, expr, ctx, limit=64):
    nodes = 0
    for node in ast.walk(expr):
        nodes += 1
        if nodes > limit:
            return None
        if type(node) is ast.Attribute and node.attr == "grad":
            return True
    t = type(expr)
    if t is ast.Constant:
        return False
    if t is ast.Name:
        bindings = model.lookup(expr.id, ctx, getattr(expr, "lineno", None))
        if not bindings or any(kind != "value" or b_ctx is None for _, kind, _, b_ctx in bindings):
            return None
        return _combine(_gradients(model, target, b_ctx) for _, _, target, b_ctx in bindings)
    if t is ast.Attribute:
        values = model.values(expr, ctx)
        if values:
            return _combine(_gradients(model, v, c) if v is not None and c is not None else None for v, c in values)
        return _gradients(model, expr.value, ctx)  # outputs.loss: what the receiver holds
    if t in (ast.List, ast.Tuple, ast.Set):
        return _combine(_gradients(model, e, ctx) for e in expr.elts) if expr.elts else False
    if t is ast.Starred:
        return _gradients(model, expr.value, ctx)
    if t is ast.BinOp:
        return _combine([_gradients(model, expr.left, ctx), _gradients(model, expr.right, ctx)])
    if t is ast.UnaryOp:
        return _gradients(model, expr.operand, ctx)
    if t is ast.Subscript:
        return _gradients(model, expr.value, ctx)
    if t is ast.Call:
        args = [a for a in expr.args] + [k.value for k in expr.keywords]
        inputs = [_gradients(model, a, ctx) for a in args]
        if True in inputs:
            return True
        q = model.call_name(expr, ctx)
        if q == "torch.autograd.grad":
            return True
        if q is not None:
            return False if q.startswith(("torch.", "torch_xla.")) else None
        funcs = model.function_of(expr.func, ctx)
        if len(funcs) == 1 and funcs[0].returns:
            return _combine(_gradients(model, v, c) for v, c in funcs[0].returns)
        if funcs:
            return None
        f = expr.func
        if type(f) is ast.Attribute:
            return _gradients(model, f.value, ctx)  # loss.detach(): derived from the receiver
        if type(f) is ast.Name:
            bindings = model.lookup(f.id, ctx, None)
            if bindings and all(kind in ("param", "value") for _, kind, _, _ in bindings):
                return False  # model(x), criterion(out, y): a forward pass, given no gradients
        return None
    return None


class Reductions:
    """Mixin of :class:`~flake8_xla.model.Model`; see the module docstring."""

    #: wrappers and optimizers that reduce the gradients themselves: they count only where
    #: XLA code names them (a leftover import, or DDP only in the CUDA branch, reduces nothing)
    REDUCING_WRAPPERS = (
        "torch.nn.parallel.DistributedDataParallel",
        "torch_xla.distributed.fsdp.XlaFullyShardedDataParallel",
        "torch_xla.distributed.spmd.SpmdFullyShardedDataParallel",
        "torch_xla.experimental.spmd_fully_sharded_data_parallel",
        "torch_xla.distributed.zero_redundancy_optimizer.ZeroRedundancyOptimizer",
        "torch.distributed.fsdp",
        "torch.distributed._composable.fsdp",
        "torch.distributed.optim.ZeroRedundancyOptimizer",
        "torch.distributed.algorithms",
    )

    #: SPMD and training frameworks: importing them is enough (the module runs under them)
    _REDUCING_IMPORTS = (
        "torch_xla.distributed.spmd",
        "torch_xla.experimental.xla_sharding",
        "torch_xla.runtime.use_spmd",
    )

    #: training frameworks count where code uses their training objects (constructs one, or
    #: subclasses one), not for an imported utility (`from accelerate.utils import set_seed`)
    _FRAMEWORKS = (
        "accelerate.Accelerator", "accelerate.accelerator.Accelerator",
        "lightning.Trainer", "lightning.pytorch.Trainer", "lightning.Fabric", "lightning.fabric.Fabric",
        "lightning.LightningModule", "lightning.pytorch.LightningModule", "lightning.pytorch.core.LightningModule",
        "pytorch_lightning.Trainer", "pytorch_lightning.LightningModule",
        "transformers.Trainer", "transformers.trainer.Trainer", "transformers.Seq2SeqTrainer",
        "transformers.trainer_seq2seq.Seq2SeqTrainer",
        "ignite.engine", "ignite.distributed", "composer.Trainer", "composer.trainer",
    )

    def uses_framework(self) -> bool:
        """True when XLA-on code constructs a training framework's object (``Accelerator()``,
        ``Trainer(...)``, ``Fabric(...)``) or a class subclasses one (``LightningModule``)."""
        if "framework" not in self._cache:
            found = any(q.startswith(self._FRAMEWORKS) and any(self.in_xla_code(ctx) for _, ctx in recs)
                        for q, recs in self.call_index().items())  # one test per qualified name
            if not found:
                found = any(
                    (self.qualname(base, cls.ctx) or "").startswith(self._FRAMEWORKS)
                    for cls in self.classes for base in cls.node.bases)
            setup = self.project_setup  # project mode: a launching module's framework runs this code
            self._cache["framework"] = found or bool(setup is not None and setup.framework)
        return self._cache["framework"]

    def reduces_gradients_elsewhere(self) -> bool:
        """True when the module uses something that reduces gradients itself.

        DDP, XLA FSDP, FSDPv2, ZeRO-1 or torch FSDP named in XLA-on code (not a leftover
        import, not a CUDA-only branch); SPMD (``xr.use_spmd``, ``torch_xla.distributed.spmd``,
        ``XLA_USE_SPMD``); a training framework's object used in XLA-on code (``Accelerator()``,
        a Lightning ``Trainer`` or ``LightningModule``, the HF ``Trainer``); a
        model re-bound by a helper imported from another module (``model = wrap(model)``:
        it may wrap it, unknown); or a call in XLA-on code to one of the user's in-house
        reducers (``xla-reducing-calls``). In project mode also when a module whose launched
        code reaches this one's functions reduces them (:attr:`project_setup`).
        """
        if "reduces" not in self._cache:
            setup = self.project_setup
            self._cache["reduces"] = (
                bool(setup is not None and setup.reduces)
                or self.uses_spmd()
                or any(q.startswith(self._REDUCING_IMPORTS) for q in self.used_names())
                or self.uses_framework()
                or self.names_in_xla_code(self.REDUCING_WRAPPERS)
                or self.rewrapped_by_import()
                or any(self.in_xla_code(ctx) for _, ctx in self.calls_named(self.settings.reducing_calls)))
        return self._cache["reduces"]

    def names_in_xla_code(self, prefixes: tuple[str, ...]) -> bool:
        """True when XLA-on code names something under ``prefixes``: an attribute chain, or a
        name bound by a from-import of it (the import statement itself does not count)."""
        for prefix in ("torch", "torch_xla"):
            for node, q, ctx in self.references(prefix):
                if type(node) is ast.Attribute and q.startswith(prefixes) and self.in_xla_code(ctx):
                    return True
        for _, alias, full, _ in self.import_froms:
            if not canonical(full).startswith(prefixes):
                continue
            bound = alias.asname or alias.name
            for ctx in self.name_loads.get(bound, ()):
                bindings = self.lookup(bound, ctx, None)
                if bindings and any(kind == "import" and canonical(target).startswith(prefixes)
                                    for _, kind, target, _ in bindings) and self.in_xla_code(ctx):
                    return True
        return False

    _MODEL_NAME = re.compile(r"(?i)model|net|module")

    def _rewrapping_call(self, call: ast.Call, ctx) -> bool:
        """A call whose code is not seen here and may wrap the model it is handed: a
        function imported from another module (not torch, not the standard library), or a
        method of an object (``strategy.wrap_model(model)``, ``accelerator.prepare(model)``)
        that is no torch API. Project code the project knows (:meth:`callee_helpers`)
        wraps when one function it may run returns a wrapped module (``returns_wrap``)."""
        if not (self._imported_helper(call, ctx) or (
                type(call.func) is ast.Attribute and self.call_name(call, ctx) is None
                and type(call.func.value) in (ast.Name, ast.Attribute))):
            return False
        helpers = self.callee_helpers(call, ctx) if self.project_lookup is not None else None
        if helpers:  # project code: what it returns says whether it wraps
            return any(h.returns_wrap for h in helpers)
        f = call.func
        targets = self._self_dispatch(ctx.func, f.attr) if type(f) is ast.Attribute and type(f.value) is ast.Name \
            and ctx.func is not None and ctx.func.params and f.value.id == ctx.func.params[0] else None
        if targets:  # self.setup_module(module): the methods the objects reaching here run
            for file, qual in targets:
                if not file:
                    local = self._local_targets(((file, qual),))
                    if not local or not self._gives_param_back(local[0]):
                        return True
                    continue
                head, _, m = qual.rpartition(".")
                try:
                    h = self.project_lookup((m,), cls=(file, head))
                except (Exception, RecursionError):  # the project cannot be read: unknown
                    return True
                if h is None or h.returns_wrap or h.moves_param < 0:
                    return True
            return False
        return True

    def _gives_param_back(self, func) -> bool:
        """Every ``return`` of ``func`` gives back one of its parameters, maybe moved
        (``return module.to(self.root_device())``): it wraps nothing."""
        if not func.returns:
            return False
        for value, _ in func.returns:
            while type(value) is ast.Call and type(value.func) is ast.Attribute \
                    and value.func.attr in ("to", "cuda", "cpu", "train", "eval"):
                value = value.func.value
            if type(value) is not ast.Name or value.id not in func.params[1:]:
                return False
        return True

    def _project_wrap(self, call: ast.Call, ctx) -> bool:
        """Project code every function of which ``call`` may run returns a DDP / FSDP wrap
        (``model = backend.wrap_model(torch.nn.Linear(4, 2))``, the module built inline)."""
        return self.project_lookup is not None and self.callee_agree(call, ctx, "returns_wrap") is not None

    def rewrapped_by_import(self) -> bool:
        """``model = wrap(model)`` (or ``self.model = wrap(self.model)``) in XLA-on code with
        ``wrap`` imported from another module (not torch, not the standard library) or a
        method of an object (``model = strategy.wrap_model(model)``): it may wrap the model
        in DDP or FSDP, which cannot be seen."""
        if "rewrapped" in self._cache:
            return self._cache["rewrapped"]
        result = False
        modules = set()
        for call, _ in self.method_calls("parameters", "named_parameters"):
            base = call.func.value
            modules.add(base.id if type(base) is ast.Name else base.attr if type(base) is ast.Attribute else None)
        scopes = [(self.module_scope.bindings, None)] + [(f.scope.bindings, f) for f in self.functions if f.scope]
        for bindings, _ in scopes:
            for name, entries in bindings.items():
                if result:
                    break
                for _, kind, target, b_ctx in entries:
                    if kind == "value" and type(target) is ast.Call and b_ctx is not None \
                            and (name in modules or self._MODEL_NAME.search(name)) \
                            and self._rewrapping_call(target, b_ctx) and self.in_xla_code(b_ctx) \
                            and (self._passes(target, name) or self._project_wrap(target, b_ctx)):
                        result = True
                        break
        if not result:
            for cls in self.classes:
                for attr, assigned in cls.attrs.items():
                    if any(type(v) is ast.Call and c is not None and self._rewrapping_call(v, c)
                           and (self._passes(v, attr) or self._project_wrap(v, c)) and self.in_xla_code(c)
                           for v, c in assigned):  # (self.netD = wrap_ddp(netD.to(device)))
                        result = True
        self._cache["rewrapped"] = result
        return result

    @staticmethod
    def _passes(call: ast.Call, name: str) -> bool:
        for arg in list(call.args) + [k.value for k in call.keywords]:
            node = arg.value if type(arg) is ast.Starred else arg
            if (type(node) is ast.Name and node.id == name) or (
                    type(node) is ast.Attribute and node.attr == name and type(node.value) is ast.Name
                    and node.value.id == "self"):
                return True  # wrap(model), wrap(self.model): not instantiate(cfg.model), a config entry
        return False

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
                for q in self.used_names()) or any(key == "XLA_USE_SPMD" for key, _, _, _ in self.env_writes()) \
                or bool(self.project_setup is not None and self.project_setup.spmd)  # project mode: the launcher's
        return self._cache["spmd"]
