"""Tensors and the step: which values live on the XLA device, which are host values, and
which code runs once per iteration of a step loop.

- :meth:`Tensors.tensor_kind`: ``"device"``, ``"host"`` or ``None`` (unknown) for an
  expression. A value is on the device when it comes from a model call, a loss function
  on device values, a torch op or tensor method on device tensors, a batch of a device
  loader (``MpDeviceLoader``), or when the loss a step back-propagates is computed from
  it (``loss.backward()`` shows which values are on the device even when the model is a
  parameter; a back-propagated loss bound both to a device value and to an unknown helper's
  result is on the device), or a value of a dict of device tensors a loop draws
  (``for k, v in losses.items():``). It is a host value when it comes from ``len()``, ``.size()`` / ``.shape``,
  numbers and Python arithmetic on them, a read already taken (``.item()``, ``.cpu()``),
  ``range`` / ``enumerate`` counters. What cannot be seen is unknown.
- :meth:`Tensors.step_sites`: the code that runs once per iteration of a step loop (the
  loop body of the innermost loops that step, the module functions they call up to
  :attr:`~.training.Training.HELPER_DEPTH` levels, ``torch_xla.compile``d steps and the
  ``forward`` of module classes), minus ``xm.add_step_closure`` arguments, code after a
  sync in the same iteration, and everything under eager mode; each site says whether it
  sits under a step gate (``if step % N == 0:``).

Iterative walks; every answer memoised in ``self._cache``.
"""

from __future__ import annotations

import ast
import bisect
import re

from .reductions import OPTIMIZER_STEP
from .runtime import dotted
from .scopes import UNKNOWN, Ctx, FunctionInfo, _case_test, _child_fields
from .syncs import DEVICE_COLLECTIVES

DEVICE, HOST = "device", "host"
#: builtin types no tensor is an instance of (an isinstance guard on them excludes tensors)
_HOST_BUILTIN_TYPES = frozenset({"int", "float", "bool", "complex", "str", "bytes", "bytearray", "list", "tuple",
                                 "dict", "set", "frozenset", "range", "type"})
_NUMPY_HOST_TYPES = frozenset({"numpy.ndarray", "numpy.generic", "numpy.number", "numpy.floating", "numpy.integer",
                               "numpy.bool_", "numpy.float32", "numpy.float64", "numpy.int32", "numpy.int64"})
#: an unknown helper's result that a back-propagated loss is bound to: a device value where
#: another definition reaching the same read is one (mixed reaching definitions)
_BACKPROP = "backprop"

#: tensor methods that hand the value to the host (the reads XLA501 reports)
READ_METHODS = frozenset({"item", "tolist", "numpy", "cpu"})
#: tensor methods and attributes that return Python values without a transfer
HOST_METHODS = frozenset({
    "size", "dim", "numel", "nelement", "ndimension", "element_size", "stride", "data_ptr",
    "is_contiguous", "get_device", "is_floating_point", "is_complex", "storage_offset",
    "__len__", "type", "storage", "untyped_storage", "is_signed", "has_names",
})
HOST_ATTRS = frozenset({
    "shape", "dtype", "device", "ndim", "requires_grad", "is_cuda", "is_leaf", "names",
    "layout", "is_sparse", "is_quantized", "is_meta", "training", "grad_fn", "itemsize", "nbytes",
})
#: tensor attributes that are tensors on the same device
TENSOR_ATTRS = frozenset({"grad", "data", "T", "mT", "H", "mH", "real", "imag"})
#: attributes that stay on the device: tensor views and model outputs (``out.loss``)
_NOT_TENSOR_METHODS = frozenset({"backward", "register_hook", "apply_", "map_", "tolist", "keys",
                                 "values", "items", "get", "copy_", "zero_", "fill_"})
#: tensor methods the loss is computed through (their receiver is on the device)
LOSS_PATH_METHODS = frozenset({
    "float", "double", "half", "bfloat16", "mean", "sum", "view", "reshape", "squeeze",
    "unsqueeze", "contiguous", "to", "type_as", "clone", "div", "mul", "add", "sub", "log",
    "exp", "abs", "pow", "norm", "logsumexp", "softmax", "log_softmax", "gather", "flatten",
    "view_as", "permute", "transpose", "masked_fill", "squeeze_", "nansum", "nanmean", "neg",
    "sqrt", "square", "max", "min", "amax", "amin", "__getitem__", "long", "int",
})
_BUILTINS_HOST = frozenset({"len", "int", "float", "bool", "str", "repr", "round", "isinstance",
                            "hash", "id", "type", "range", "format", "hasattr", "callable", "ord", "chr"})
_TORCH_HOST = frozenset({
    "torch.is_tensor", "torch.numel", "torch.is_floating_point", "torch.is_complex", "torch.equal",
    "torch.allclose", "torch.is_nonzero", "torch.get_default_dtype", "torch.is_grad_enabled",
    "torch.typename", "torch.device", "torch.dtype", "torch.Size", "torch.finfo", "torch.iinfo",
    "torch_xla.core.xla_model.mesh_reduce", "torch_xla.core.xla_model.xla_device",
    "torch_xla.device", "torch_xla.runtime.world_size", "torch_xla.runtime.global_ordinal",
    "torch_xla.core.xla_model.get_ordinal", "torch_xla.core.xla_model.xrt_world_size",
})
_NOT_TORCH_OPS = ("torch.nn.", "torch.utils.", "torch.optim.", "torch.cuda.", "torch.distributed.",
                  "torch.backends.", "torch.autograd.", "torch.multiprocessing.", "torch.jit.",
                  "torch.compile", "torch.manual_seed", "torch.set_", "torch.load", "torch.save",
                  "torch.no_grad", "torch.enable_grad", "torch.inference_mode", "torch.autocast",
                  "torch.amp.", "torch.profiler.", "torch_xla.distributed.", "torch_xla.runtime.",
                  "torch_xla.debug.", "torch_xla.experimental.", "torch_xla.amp.", "torch_xla.utils.")
#: gradient-norm clips: they return the total norm, a tensor on the device of the gradients
CLIP_NORMS = frozenset({"torch.nn.utils.clip_grad_norm_", "torch.nn.utils.clip_grad_norm",
                        "torch.nn.utils.clip_grad.clip_grad_norm_", "torch.nn.utils.clip_grad.clip_grad_norm"})
#: torch functions that create a tensor: on the CPU unless ``device=`` says otherwise
TORCH_FACTORIES = frozenset("torch." + n for n in (
    "randn", "rand", "randint", "randperm", "zeros", "ones", "empty", "full", "arange", "linspace",
    "logspace", "eye", "tensor", "as_tensor", "from_numpy", "normal", "bernoulli", "multinomial"))
XLA_DEVICES = ("torch_xla.device", "torch_xla.core.xla_model.xla_device", "torch_xla.runtime.xla_device")
_MODEL_FACTORIES = ("torchvision.models.", "timm.create_model", "transformers.")
_WRAPPERS = ("torch.nn.parallel.DistributedDataParallel", "torch_xla.distributed.fsdp.",
             "torch_xla.distributed.spmd.", "torch.distributed.fsdp.", "torch.compile")
_LOSS_NAME = re.compile(r"(?i)(loss|crit)")
_GATE_LIMIT = 8
_DTYPES = frozenset({"float", "float32", "float64", "double", "float16", "half", "bfloat16", "int", "int32",
                     "int64", "long", "int16", "short", "int8", "uint8", "bool", "complex64", "complex128"})
ADD_STEP_CLOSURE = "torch_xla.core.xla_model.add_step_closure"
STEP_SCOPES = ("torch_xla.step", "torch_xla.debug.profiler.StepTrace")  # sync when the block ends
WAITS = ("torch_xla.core.xla_model.wait_device_ops", "torch_xla.sync")
_SKIP_NODES = frozenset((ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.ListComp,
                         ast.SetComp, ast.DictComp, ast.GeneratorExp))

_SITE_NODES = (ast.JoinedStr, ast.BinOp, ast.Subscript)
#: what a step walk of an expression never looks into: names, constants, absent parts
_LEAVES = frozenset((ast.Name, ast.Constant, type(None)))

#: per statement type, ``(field, holds statements)`` for the fields a step walk reads (a
#: ``while`` test is walked before, as the loop's own test)
_STMT_FIELDS: dict[type, tuple[tuple[str, bool], ...]] = {}


def _stmt_fields(t: type) -> tuple[tuple[str, bool], ...]:
    return tuple((f, f in ("body", "orelse", "finalbody")) for f in t._fields
                 if f not in ("op", "type_comment") and not (f == "test" and t is ast.While))


def _torch_op(q: str) -> bool:
    """A torch / torch_xla function computing on tensors (``torch.nn.functional`` included)."""
    if q.startswith("torch.nn.functional."):
        return True
    return q.startswith(("torch.", "torch_xla.")) and not q.startswith(_NOT_TORCH_OPS) and q not in _TORCH_HOST


def _combine(kinds) -> str | None:
    kinds = set(kinds)
    if kinds == {DEVICE}:
        return DEVICE
    if kinds == {HOST}:
        return HOST
    return None


class Tensors:
    """Mixin of :class:`~flake8_xla.model.Model`; see the module docstring."""

    #: how deep one tensor_kind question follows expressions and names
    KIND_DEPTH = 24

    # ------------------------------------------------------------------ kinds
    def call_ctx(self, call: ast.Call) -> Ctx | None:
        """The context the walk recorded for ``call``."""
        table = self._cache.get("callctx")
        if table is None:
            table = self._cache["callctx"] = {id(c): x for c, x in self.calls}
        return table.get(id(call))

    def tensor_kind(self, expr: ast.AST | None, ctx: Ctx, _depth: int = 0) -> str | None:
        """``"device"``, ``"host"`` or ``None`` (unknown) for the value of ``expr``."""
        if expr is None or ctx is None:
            return None
        key = ("tk", id(expr))
        cache = self._cache
        if key in cache:
            return cache[key]
        if _depth > self.KIND_DEPTH:
            return None  # too deep to tell: unknown (not cached: a shallower ask may see it)
        cache[key] = None  # cycles resolve to unknown
        result = self._kind(expr, ctx, _depth + 1)
        cache[key] = result
        return result

    def _kind(self, e, ctx, d):
        t = type(e)
        if id(e) in self.backward_values()[0]:
            return DEVICE
        if t is ast.Constant or t is ast.JoinedStr:
            return HOST
        if t is ast.Name:
            return self._name_kind(e, ctx, d)
        if t is ast.Attribute:
            if e.attr in HOST_ATTRS:
                return HOST
            if self.qualname(e, ctx) is not None:
                return None
            vals = self.values(e, ctx)
            if vals:
                return _combine(self.tensor_kind(v, c, d) if v is not None else None for v, c in vals)
            base = e.value
            if self._is_self(base, ctx) or self.tensor_kind(base, ctx, d) != DEVICE:
                return None  # an attribute of self nothing visibly assigns, or of a non-tensor
            if e.attr in TENSOR_ATTRS or type(base) in (ast.Call, ast.Subscript):
                return DEVICE
            if type(base) is ast.Name:  # a model output (`out.logits`): bound to a call result
                bindings = self._bindings_before(base, ctx)
                if bindings and all(k == "value" and type(v) is ast.Call for _, k, v, _ in bindings):
                    return DEVICE
            return None
        if t is ast.Subscript:
            item = self.dict_item(e, ctx)
            if item is not None:  # out["loss"] of `out = {"loss": loss.detach(), ...}`
                return self.tensor_kind(item[0], item[1], d)
            k = self.tensor_kind(e.value, ctx, d)
            return k if k in (DEVICE, HOST) else None
        if t is ast.BinOp:
            if type(e.op) is ast.Mod and type(e.left) in (ast.Constant, ast.JoinedStr):
                return HOST  # string formatting
            kinds = (self.tensor_kind(e.left, ctx, d), self.tensor_kind(e.right, ctx, d))
            if DEVICE in kinds:
                return DEVICE
            return HOST if kinds == (HOST, HOST) else None
        if t is ast.UnaryOp:
            k = self.tensor_kind(e.operand, ctx, d)
            if type(e.op) is ast.Not:
                return HOST if k == HOST else None
            return k
        if t is ast.Compare:
            if all(type(op) in (ast.Is, ast.IsNot) for op in e.ops):
                return HOST
            if any(type(op) in (ast.In, ast.NotIn) for op in e.ops):
                return None
            kinds = [self.tensor_kind(x, ctx, d) for x in [e.left] + e.comparators]
            if DEVICE in kinds:
                return DEVICE
            return HOST if all(k == HOST for k in kinds) else None
        if t is ast.BoolOp:
            return HOST if all(self.tensor_kind(v, ctx, d) == HOST for v in e.values) else None
        if t is ast.IfExp:
            return _combine((self.tensor_kind(e.body, ctx, d), self.tensor_kind(e.orelse, ctx, d)))
        if t is ast.NamedExpr:
            return self.tensor_kind(e.value, ctx, d)
        if t is ast.Call:
            return self._call_kind(e, ctx, d)
        return None

    def _name_kind(self, e, ctx, d):
        if self.guarded_reads and self.guarded_not_device(e, ctx):
            return None  # `if isinstance(x, float):`, `if t.device.type == "cpu":` around the read
        bindings = self._bindings_before(e, ctx)
        if not bindings:
            return None
        _, names = self.backward_values()
        kinds = []
        for line, kind, target, b_ctx in bindings:
            scope = b_ctx.scope if b_ctx is not None else ctx.scope
            if kind == "value":
                k = self.tensor_kind(target, b_ctx or ctx, d)
                kinds.append(_BACKPROP if k is None and id(target) in self._cache.get("bwunknown", ()) else k)
            elif kind == "item":
                k = self.tensor_kind(target[0], b_ctx or ctx, d)
                if k != DEVICE and (id(scope), e.id) in names:
                    k = DEVICE
                kinds.append(k)
            elif kind in ("unknown", "param"):
                if kind == "param":
                    scope = self._param_scope(target, ctx)
                k = self.loop_targets().get((id(scope), e.id, line))
                if k is None and kind == "unknown":
                    k = self.dict_loop_value(scope, e.id, line)  # for k, v in losses.items() (attributes.py)
                if k is None and kind == "unknown":
                    k = self.module_param_target(scope, e.id, line)  # for p in model.parameters()
                if k is None and (id(scope), e.id) in names:
                    k = DEVICE
                if k is None and kind == "param" and isinstance(target, FunctionInfo) and target.cls is None:
                    k = self.param_tensor_kind(target, e.id, d)  # every call passes a device tensor (params.py)
                elif k is None and kind == "param" and isinstance(target, FunctionInfo) and target.name == "forward" \
                        and self.forward_param_device(target, e.id, d):
                    k = DEVICE  # some call of an instance passes a device tensor (params.py)
                elif k is None and kind == "param" and isinstance(target, FunctionInfo) and target.cls is not None \
                        and self.project_callers is not None and target.params and e.id != target.params[0]:
                    k = self.project_method_param_kind(target, e.id)  # every project caller passes one
                kinds.append(k)
            else:
                return None
        if _BACKPROP in kinds:  # `loss = F.ce(...)` or `loss = helper(...)`, then `loss.backward()`
            kinds = [DEVICE if k is _BACKPROP and DEVICE in kinds else k for k in kinds]
        return _combine(kinds)

    def guarded_not_device(self, e: ast.Name, ctx: Ctx) -> bool:
        """True when a test of ``e``'s own function around it says the name holds no XLA
        tensor there: ``if isinstance(x, (int, float)):`` / ``numbers.Number`` /
        ``np.ndarray`` (every type named is no tensor), the ``else`` of (or the code after
        ``return`` under) ``if isinstance(x, torch.Tensor):``, ``if not isinstance(x,
        torch.Tensor):``, ``type(x) is float``, ``if t.device.type == "cpu":`` / ``!= "xla"``,
        ``if t.is_cpu:``; through ``not`` and ``and`` (``or`` when false; the first 16
        operands), unless the name is
        rebound between the test and ``e``; ``torch.is_tensor(x)`` as ``isinstance``. The
        innermost 32 tests are looked at. ``ctx`` is not used: the walk's own context of the
        read is (:attr:`guarded_reads`; a step site's ctx may be its region's)."""
        ctx = self.guarded_reads.get(id(e))  # the read's own ctx (a step site's may be its region's)
        if ctx is None:
            return False
        name = e.id
        base = ctx.func.ctx.frames if ctx.func is not None else None
        node = ctx.frames
        for _ in range(32):
            if node is None or node is base or not node:
                return False
            frame = node.frame
            if type(frame) is tuple and self._excludes_device(frame[0], frame[1], name, ctx, 0):
                at_test = self.lookup(name, ctx, frame[0].lineno)
                here = self._bindings_before(e, ctx)
                return at_test is not None and here is not None and len(at_test) == len(here) \
                    and all(a is b for a, b in zip(at_test, here))
            node = node.parent
        return False

    def _excludes_device(self, test, polarity: bool, name: str, ctx: Ctx, depth: int) -> bool:
        """Test ``test`` having truth ``polarity`` means ``name`` holds no XLA tensor."""
        t = type(test)
        if depth > 8:
            return False
        if t is ast.UnaryOp and type(test.op) is ast.Not:
            return self._excludes_device(test.operand, not polarity, name, ctx, depth + 1)
        if t is ast.BoolOp:
            if (type(test.op) is ast.And) is polarity:  # every operand has this truth
                return any(self._excludes_device(v, polarity, name, ctx, depth + 1) for v in test.values[:16])
            return False
        if t is ast.Call and type(test.func) is ast.Name and test.func.id == "isinstance" \
                and self.lookup("isinstance", ctx, None) is None and len(test.args) == 2 \
                and type(test.args[0]) is ast.Name and test.args[0].id == name:
            types = test.args[1].elts if type(test.args[1]) is ast.Tuple else [test.args[1]]
            kinds = [self._type_kind(x, ctx) for x in types]
            return all(k == HOST for k in kinds) if polarity else DEVICE in kinds
        if t is ast.Call and len(test.args) == 1 and type(test.args[0]) is ast.Name and test.args[0].id == name \
                and self.call_name(test, ctx) == "torch.is_tensor":
            return not polarity
        if t is ast.Compare and len(test.ops) == 1:
            left, op, right = test.left, type(test.ops[0]), test.comparators[0]
            if type(left) is ast.Call and type(left.func) is ast.Name and left.func.id == "type" \
                    and len(left.args) == 1 and type(left.args[0]) is ast.Name and left.args[0].id == name:
                if polarity and op in (ast.Is, ast.Eq):
                    return self._type_kind(right, ctx) == HOST
                if polarity and op is ast.In and type(right) in (ast.Tuple, ast.List, ast.Set):
                    return bool(right.elts) and all(self._type_kind(x, ctx) == HOST for x in right.elts)
                return False
            if type(left) is ast.Attribute and left.attr == "type" and type(left.value) is ast.Attribute \
                    and left.value.attr == "device" and type(left.value.value) is ast.Name \
                    and left.value.value.id == name and type(right) is ast.Constant and isinstance(right.value, str) \
                    and op in (ast.Eq, ast.NotEq):
                equal = (op is ast.Eq) is polarity  # device.type == right.value
                return right.value != "xla" if equal else right.value == "xla"
            return False
        if t is ast.Attribute and test.attr == "is_cpu" and type(test.value) is ast.Name and test.value.id == name:
            return polarity
        return False

    def _type_kind(self, node, ctx) -> str | None:
        """``DEVICE`` for a tensor type (``torch.Tensor``, ``nn.Parameter``, ``torch.*Tensor``),
        ``HOST`` for a type whose values are no tensor (a builtin scalar or container,
        ``numbers.*``, ``np.ndarray`` / numpy scalar types), None otherwise."""
        if type(node) is ast.Name and node.id in _HOST_BUILTIN_TYPES and self.lookup(node.id, ctx, None) is None:
            return HOST
        if type(node) is ast.Constant and node.value is None:
            return HOST
        q = self.qualname(node, ctx) if type(node) in (ast.Name, ast.Attribute) else None
        if q is None:
            return None
        if q in ("torch.nn.Parameter", "torch.nn.parameter.Parameter") or (q.startswith("torch.") and q.endswith("Tensor")):
            return DEVICE
        if q.startswith(("numbers.", "decimal.", "fractions.")) or q in _NUMPY_HOST_TYPES:
            return HOST
        return None

    def _bindings_before(self, e, ctx):
        """The bindings a read of name ``e`` sees; in ``h = h / 2`` the ``h`` on the right
        sees the binding before that line, not the one the line makes."""
        line = getattr(e, "lineno", None)
        bindings = self.lookup(e.id, ctx, line)
        if bindings and line is not None and len(bindings) == 1 and bindings[0][0] == line \
                and bindings[0][1] in ("value", "unknown", "item") and line > 1:
            before = self.lookup(e.id, ctx, line - 1)
            if before and all(b[0] < line for b in before):
                return before
        if bindings and line is not None and all(b[0] > line and b[3] is not None and b[3].scope is ctx.scope
                                                 for b in bindings):
            return None  # a value carried over from the previous iteration (its sync has run)
        return bindings

    @staticmethod
    def _param_scope(target, ctx):
        if isinstance(target, FunctionInfo) and target.scope is not None:
            return target.scope
        return ctx.scope

    def _builtin(self, func, ctx, names) -> str | None:
        if type(func) is ast.Name and func.id in names and not self.lookup(func.id, ctx, None):
            return func.id
        return None

    def _call_kind(self, call, ctx, d):
        f = call.func
        if self._builtin(f, ctx, _BUILTINS_HOST):
            return HOST
        q = self.call_name(call, ctx)
        if q is not None:
            if q in TORCH_FACTORIES:
                return self._factory_kind(call, ctx)
            if q in _TORCH_HOST or q.startswith(("numpy.", "math.", "time.", "random.", "statistics.")):
                return HOST
            if q in DEVICE_COLLECTIVES:
                return DEVICE  # xm.all_reduce / all_gather / ...: XLA tensors only (syncs.py)
            if q in CLIP_NORMS:  # the total norm of gradients a backward of the same function made,
                # or of the step another module's step loop runs once per call (its backward elsewhere)
                return DEVICE if self._backward_in(ctx.func) or (
                    ctx.func is not None and self.project_callers is not None and self.updates_once(ctx.func)
                    and bool(self.project_step_calls(ctx.func))) else None
            if _torch_op(q):
                return DEVICE if self._any_device_arg(call, ctx, d) else None
            if self.project_defs is not None:
                index = self.project_returns_param(f, ctx)  # a helper of another module that returns its argument
                if 0 <= index < len(call.args) and not any(type(a) is ast.Starred for a in call.args[:index + 1]):
                    return self.tensor_kind(call.args[index], ctx, d)
                computed = self.project_tensor_of(f, ctx)  # a torch computation on some of its arguments
                if computed and not any(type(a) is ast.Starred for a in call.args) and any(
                        i < len(call.args) and self.tensor_kind(call.args[i], ctx, d) == DEVICE for i in computed):
                    return DEVICE
            return None
        if type(f) is ast.Attribute:
            m = f.attr
            if m in READ_METHODS or m in HOST_METHODS:
                return HOST
            if m == "to" and self._to_cpu(call, ctx):
                return HOST
            if m == "to" and self._to_xla(call, ctx) and self._batch_or_tensor(f.value, ctx, d):
                return DEVICE  # batch.to(torch_xla.device()), torch.randn(4).to(device)
            if m == "format" and type(f.value) is ast.Constant:
                return HOST
            if m not in _NOT_TENSOR_METHODS and self.tensor_kind(f.value, ctx, d) == DEVICE:
                return DEVICE
        if self.is_model(f, ctx):
            return DEVICE
        if self.is_loss_fn(f, ctx) and self._any_device_arg(call, ctx, d):
            return DEVICE
        if type(f) is ast.Name and self.used_as_module(f, ctx) and self._any_device_arg(call, ctx, d):
            return DEVICE  # model(images) of a parameter the function trains (model.train()): on the input's device
        funcs = self.function_of(f, ctx)
        if funcs and len(funcs) == 1 and funcs[0].returns and type(f) is ast.Name:
            if any(self.cpu_tensor(a, ctx) for a in call.args):
                return None  # the helper runs on CPU tensors here (a CPU reference run)
            return _combine(self.tensor_kind(v, c, d) for v, c in funcs[0].returns)
        if funcs and len(funcs) == 1 and type(f) is ast.Attribute and self._is_self(f.value, ctx):
            # `loss = self.training_step(batch)`: a method of the class, and every override of
            # it in a subclass of the module, must return the same kind
            methods = self._self_methods(ctx.func.cls, f.attr, funcs[0])
            if not all(m.returns for m in methods) or any(self.cpu_tensor(a, ctx) for a in call.args):
                return None
            return _combine(self.tensor_kind(v, c, d) for m in methods for v, c in m.returns)
        return None

    def _backward_in(self, func) -> bool:
        """Some ``X.backward()`` / ``torch.autograd.backward`` call of ``func``'s own code (the
        module level for ``None``) back-propagates a value (:meth:`backward_values`): the
        gradients a clip of that function measures are the device's (memoised per function)."""
        table = self._cache.get("bwfuncs")
        if table is None:
            table = self._cache["bwfuncs"] = set()
            for call, cctx in self.method_calls("backward"):
                table.add(id(cctx.func))
            for call, cctx in self.calls_to("torch.autograd.backward"):
                table.add(id(cctx.func))
        return id(func) in table

    def dict_item(self, sub: ast.Subscript, ctx: Ctx) -> tuple[ast.AST, Ctx] | None:
        """``(value, ctx)`` that ``d["k"]`` reads when ``d`` is a local name every binding of
        which its read sees is one dict display with that string key (and no ``**`` entry),
        and its function does nothing to ``d`` but read items (:meth:`dict_uses`: no store,
        no alias, not handed to a call); None otherwise."""
        key = sub.slice
        if type(sub.value) is not ast.Name or type(key) is not ast.Constant or type(key.value) is not str:
            return None
        return self.dict_value(sub.value, key.value, ctx)

    def dict_value(self, expr: ast.AST, key: str, ctx: Ctx, passed_to: ast.Call | None = None):
        """``(value, ctx)`` of string key ``key`` in the dict ``expr`` holds (:meth:`dict_display`;
        ``passed_to``: the one call that may receive the name); None otherwise."""
        found = self.dict_display(expr, ctx, passed_to)
        if found is None:
            return None
        target, b_ctx = found
        value = None
        for k, v in zip(target.keys, target.values):
            if type(k) is ast.Constant and k.value == key:
                value = v  # (the last entry of a repeated key wins, as in Python)
        return (value, b_ctx) if value is not None else None

    def dict_display(self, expr: ast.AST, ctx: Ctx, passed_to: ast.Call | None = None):
        """``(display, ctx)`` when ``expr`` is a dict display without ``**`` entries, or a
        name every binding of which its read sees is one such display, in a function that
        only reads the name's items (:meth:`dict_uses`) and hands the name to no call but
        ``passed_to`` (a helper that gets it may change it); else None."""
        if type(expr) is ast.Dict:
            return (expr, ctx) if None not in expr.keys else None
        if type(expr) is not ast.Name:
            return None
        bindings = self._bindings_before(expr, ctx)
        if not bindings or len(bindings) != 1:
            return None
        _, kind, target, b_ctx = bindings[0]
        if kind != "value" or type(target) is not ast.Dict or None in target.keys:
            return None
        b_ctx = b_ctx or ctx
        escaped, calls = self.dict_uses(b_ctx.func, expr.id)
        if escaped or any(c is not passed_to for c in calls):
            return None
        return target, b_ctx

    #: dict methods that read it, never change it
    _DICT_READS = frozenset({"get", "items", "keys", "values", "copy", "__getitem__", "__contains__", "__len__"})
    #: builtins that read their argument, never change it
    _READ_ONLY_BUILTINS = frozenset({"len", "print", "str", "repr", "isinstance", "sorted", "list", "tuple",
                                     "iter", "bool", "any", "all", "set", "frozenset", "hash", "id", "type"})

    def dict_uses(self, func, name: str) -> tuple[bool, tuple]:
        """How the code of ``func`` (the module level for ``None``; not of the functions,
        classes and lambdas nested in it, whose use of ``name`` counts as an escape) uses the
        name ``name``: ``(escaped, calls)``. ``escaped`` when anything may change what it
        holds other than rebinding it: an item or slice stored or deleted (``d["k"] = v``,
        also in an unpacking or a ``for`` target), a method other than a read
        (``d.update(...)``), an alias (``view = d``), a return, yield or container holding
        it, a nested scope naming it. ``calls``: the calls it is handed to as an argument
        (a read-only builtin such as ``len`` or ``print`` aside). One walk of the function
        per model answers every name."""
        key = ("dictuses", id(func))
        table = self._cache.get(key)
        if table is None:
            table = self._cache[key] = self._dict_uses_of(func)
        esc, calls = table
        return name in esc, tuple(calls.get(name, ()))

    def _dict_uses_of(self, func) -> tuple[set, dict]:
        root = func.node if func is not None else self.tree
        escaped: set[str] = set()
        calls: dict[str, list] = {}
        todo = [(child, root) for child in (root.body if hasattr(root, "body") else [])]
        while todo:
            node, parent = todo.pop()
            t = type(node)
            if t in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda):
                escaped.update(n.id for n in ast.walk(node) if type(n) is ast.Name)
                continue
            if t is ast.Name:
                found: list = []
                if self._dict_use_escapes(node, parent, found):
                    escaped.add(node.id)
                elif found:
                    calls.setdefault(node.id, []).extend(found)
                continue
            above = parent if t is ast.keyword else node  # f(x=d): the call is the keyword's parent
            for child in ast.iter_child_nodes(node):
                todo.append((child, above))
        return escaped, calls

    def _dict_use_escapes(self, node: ast.Name, parent: ast.AST, calls: list) -> bool:
        """One occurrence of the dict's name (:meth:`dict_uses`): True when it may change it."""
        if type(node.ctx) is ast.Store:
            return False  # a rebinding: the bindings decide
        if type(node.ctx) is ast.Del:
            return True
        t = type(parent)
        if t is ast.Subscript and parent.value is node:
            return type(parent.ctx) is not ast.Load  # d["k"] = v, del d["k"], for d["k"] in ...
        if t is ast.Attribute and parent.value is node:
            return parent.attr not in self._DICT_READS
        if t is ast.Call and node is not parent.func:
            f = parent.func
            if type(f) is ast.Name and f.id in self._READ_ONLY_BUILTINS:
                return False
            calls.append(parent)
            return False
        if t in (ast.FormattedValue, ast.Compare, ast.If, ast.While, ast.Assert, ast.Expr, ast.BoolOp, ast.UnaryOp):
            return False  # a read, a test
        return True

    def _self_methods(self, cls, name, found) -> list:
        """``found`` (what ``self.name`` resolves to in ``cls``) and the overrides of ``name``
        in the module's subclasses of ``cls``: what ``self.name(...)`` may run."""
        key = ("selfm", id(cls), name)
        if key not in self._cache:
            out = [found]
            for c in self.classes:
                m = c.methods.get(name)
                if m is not None and c is not cls and all(m is not o for o in out) \
                        and any(b is cls for b in self.mro(c)):
                    out.append(m)
            self._cache[key] = out
        return self._cache[key]

    def _factory_kind(self, call, ctx):
        """``torch.randn(...)``: a CPU tensor without ``device=``, on the XLA device with
        ``device=torch_xla.device()`` (or a name bound to it, or ``"xla"``), or any device
        expression :meth:`~.runtime.Runtime.device_place` places there (a parameter every
        caller passes the XLA device, ``w.device`` of a device tensor)."""
        dev = self.kwarg(call, "device")
        if dev is None:
            return HOST
        if not isinstance(dev, ast.AST):
            return None
        value = self.const(dev, ctx)
        if isinstance(value, str):
            kind = value.split(":")[0]
            return HOST if kind == "cpu" else DEVICE if kind == "xla" else None
        vals = self.resolve_values(dev, ctx)
        if vals and all(type(v) is ast.Call and self.call_name(v, c) in XLA_DEVICES for v, c in vals):
            return DEVICE
        if self.device_place(dev, ctx) == "xla":
            return DEVICE  # a helper's `device` parameter every caller passes it, `device=w.device`
        return None

    def cpu_tensor(self, expr, ctx) -> bool:
        """A tensor visibly on the CPU: a torch factory without ``device=``, ``.cpu()``,
        ``.to("cpu")``, a slice or ``copy.deepcopy`` of one, through names."""
        for _ in range(8):
            t = type(expr)
            if t is ast.Subscript:
                expr = expr.value
                continue
            if t is ast.Name:
                vals = self.values(expr, ctx)
                if not vals or len(vals) != 1:
                    return False
                expr, ctx = vals[0]
                continue
            if t is not ast.Call:
                return False
            q = self.call_name(expr, ctx)
            if q in TORCH_FACTORIES:
                return self._factory_kind(expr, ctx) == HOST
            if q == "copy.deepcopy" and expr.args:
                expr = expr.args[0]
                continue
            f = expr.func
            return type(f) is ast.Attribute and (f.attr == "cpu" or (f.attr == "to" and self._to_cpu(expr, ctx)))
        return False

    def _any_device_arg(self, call, ctx, d) -> bool:
        for a in call.args:
            if type(a) in (ast.List, ast.Tuple):
                if any(self.tensor_kind(x, ctx, d) == DEVICE for x in a.elts):
                    return True
            elif self.tensor_kind(a, ctx, d) == DEVICE:
                return True
        return False

    #: iterables whose items are modules, not tensors
    _MODULE_ITERS = frozenset({"modules", "children", "named_modules", "named_children"})

    def _batch_or_tensor(self, expr, ctx, d) -> bool:
        """``expr`` (what ``.to(device)`` is called on) is visibly a tensor or a batch: a CPU
        tensor (``torch.randn(4)``, ``x.cpu()``, through names), or a loop target drawn from an iterable (``for x, y in
        loader:``), an item or attribute of one (``batch["ids"]``, ``batch.ids``). A module, a
        loss object, a parameter or anything else moved the same way is not taken for a tensor
        (``print(model)`` after ``model = build().to(device)`` reads nothing), unless it is a
        parameter every caller passes a batch or tensor for (:meth:`_param_batch`)."""
        if self.cpu_tensor(expr, ctx):
            return True  # torch.randn(4), x.cpu(), through names
        node = expr
        while type(node) in (ast.Subscript, ast.Attribute):
            node = node.value
        if type(node) is not ast.Name:
            return False
        bindings = self._bindings_before(node, ctx)
        if not bindings:
            return False
        if len(bindings) == 1 and bindings[0][1] == "param" and ctx.func is not None and bindings[0][2] is ctx.func \
                and d < self.KIND_DEPTH:
            return self._param_batch(ctx.func, node.id, d)
        loops = self._for_loops_at()
        hosts = self.loop_targets()
        for line, kind, _, b_ctx in bindings:
            scope = b_ctx.scope if b_ctx is not None else ctx.scope
            if kind != "unknown" or hosts.get((id(scope), node.id, line)) == HOST:
                return False
            found = False
            for loop in loops.get((id(scope), line), ()):
                it = loop.node.iter
                if type(it) is ast.Call and type(it.func) is ast.Attribute and it.func.attr in self._MODULE_ITERS:
                    return False
                if node.id in _target_names(loop.node.target):
                    found = True
            if not found:
                return False
        return True

    def _param_batch(self, func, name: str, d) -> bool:
        """Parameter ``name`` of plain module function ``func`` is a batch or a tensor: every
        call of ``func`` in the module passes one (:meth:`_batch_or_tensor` of the argument;
        :meth:`~.params.Params.every_caller_passes`: a launched function, a splat, a caller in
        another project module: unknown). Memoised per (function, parameter)."""
        key = ("param_batch", id(func), name)
        found = self._cache.get(key)
        if found is None:
            self._cache[key] = False  # a cycle of calls: unknown
            found = self._cache[key] = self.every_caller_passes(
                func, name, lambda arg, actx, call: self._batch_or_tensor(arg, actx, d + 1), "batch")
        return found

    def _to_xla(self, call, ctx) -> bool:
        """``x.to(dev)`` (or ``device=dev``) where every value ``dev`` may have is the XLA device."""
        arg = self.kwarg(call, "device", 0)
        return isinstance(arg, ast.AST) and self.device_place(arg, ctx) == "xla"

    def _to_cpu(self, call, ctx) -> bool:
        arg = self.kwarg(call, "device", 0)
        if not isinstance(arg, ast.AST):
            return False
        if type(arg) is ast.Call and self.call_name(arg, ctx) == "torch.device" and arg.args:
            arg = arg.args[0]
        value = self.const(arg, ctx)
        return isinstance(value, str) and value.split(":")[0] == "cpu"

    def is_model(self, expr: ast.AST, ctx: Ctx) -> bool:
        """True when ``expr`` holds a module (a ``torch.nn`` layer, a module class of this
        file, a torchvision/timm/transformers model, a DDP/FSDP wrap of one); every visible
        assignment must agree; a helper's parameter every caller in the module passes one
        (:meth:`_param_model`)."""
        key = ("ismodel", id(expr))
        if key in self._cache:
            return self._cache[key]
        self._cache[key] = False
        result = False
        if type(expr) in (ast.Name, ast.Attribute) and self.qualname(expr, ctx) is None:
            vals = self.resolve_values(expr, ctx)
            result = bool(vals) and all(self._model_value(v, c) for v, c in vals)
            if not vals and type(expr) is ast.Name:
                result = self._param_model(expr, ctx)
        self._cache[key] = result
        return result

    #: methods only a ``torch.nn.Module`` has among the objects a training function handles
    _MODULE_METHODS = frozenset({"train", "eval", "parameters", "named_parameters", "modules", "named_modules",
                                 "children", "named_children", "buffers", "requires_grad_"})

    def used_as_module(self, name: ast.Name, ctx: Ctx) -> bool:
        """``name`` reads a parameter of its function (nothing rebinds it) on which the
        function calls a method only a module has (``model.train()``, ``model.parameters()``):
        a module whatever the callers pass, whose outputs are on the device of its inputs
        (a module left on the host and called on a device tensor would raise). Memoised per
        (function, parameter)."""
        func = ctx.func
        if func is None or name.id not in func.params:
            return False
        key = ("used_module", id(func), name.id)
        found = self._cache.get(key)
        if found is None:
            bindings = self.lookup(name.id, ctx, getattr(name, "lineno", None))
            found = bool(bindings) and len(bindings) == 1 and bindings[0][1] == "param" and bindings[0][2] is func \
                and any(cx.func is func and type(c.func.value) is ast.Name and c.func.value.id == name.id
                        for c, cx in self.method_calls(*self._MODULE_METHODS))
            self._cache[key] = found
        return found

    def _param_model(self, name: ast.Name, ctx: Ctx) -> bool:
        """``name`` is a parameter of the plain module function it is read in and every call
        of that function passes a module for it (:meth:`is_model` of the argument; a caller in
        another project module, a splat, a default left out: unknown). Memoised per
        (function, parameter)."""
        func = ctx.func
        bindings = self.lookup(name.id, ctx, getattr(name, "lineno", None))
        if func is None or not bindings or len(bindings) != 1 or bindings[0][1] != "param" \
                or bindings[0][2] is not func:
            return False
        key = ("param_model", id(func), name.id)
        found = self._cache.get(key)
        if found is None:
            self._cache[key] = False  # a cycle of calls: unknown
            found = self._cache[key] = self.every_caller_passes(
                func, name.id, lambda arg, actx, call: self.is_model(arg, actx), "model")
        return found

    def _model_value(self, v, c) -> bool:
        for _ in range(8):
            if type(v) is not ast.Call:
                return False
            f = v.func
            q = self.call_name(v, c)
            if q is not None:
                if self.project_defs is not None and self.project_module_class(f, c):
                    return True  # a module class of another project module
                if q.startswith("torch.nn.") and not q.startswith(("torch.nn.functional", "torch.nn.parallel",
                                                                   "torch.nn.utils", "torch.nn.init")):
                    return not q.endswith("Loss")
                if q.startswith(_MODEL_FACTORIES):
                    if any(w in q for w in ("Tokenizer", "Processor", "Config", "Extractor", "pipeline",
                                            "Pipeline", "Dataset", "Trainer", "Collator")):
                        return False
                    return q.startswith("torchvision.models.") or "Model" in q or "from_pretrained" in q \
                        or q == "timm.create_model"
                if q.startswith(_WRAPPERS) and v.args:
                    nxt = v.args[0]
                    if type(nxt) is ast.Call:
                        v = nxt
                        continue
                    return type(nxt) in (ast.Name, ast.Attribute) and self.is_model(nxt, c)
                return False
            if type(f) is ast.Attribute and f.attr in ("to", "cuda", "train", "eval", "float", "half",
                                                       "bfloat16", "double", "requires_grad_"):
                if type(f.value) in (ast.Name, ast.Attribute):
                    return self.is_model(f.value, c)
                v = f.value
                continue
            if type(f) is ast.Name:
                cls = self.class_named(f.id, c)
                if cls is not None:
                    return self.is_module_class(cls)
            return False
        return False

    def is_module_class(self, cls) -> bool:
        """A class of this module that subclasses ``torch.nn.Module`` (through module classes;
        memoised per class)."""
        return self.mro_any(cls, "is_module", self._names_module_base)

    def _names_module_base(self, cls) -> bool:
        """One of ``cls``'s own bases is a torch / transformers / lightning module class."""
        for base in cls.node.bases:
            q = self.qualname(base, cls.ctx)
            if q is not None and q.startswith(("torch.nn.", "transformers.", "lightning.", "pytorch_lightning.")):
                return True
        return False

    def is_loss_fn(self, expr: ast.AST, ctx: Ctx) -> bool:
        """``criterion`` holding ``torch.nn.XLoss()``, or a name that says loss/criterion."""
        if type(expr) not in (ast.Name, ast.Attribute) or self.qualname(expr, ctx) is not None:
            return False
        vals = self.resolve_values(expr, ctx)
        if vals:
            if all(type(v) is ast.Call and (self.call_name(v, c) or "").startswith("torch.nn.")
                   and (self.call_name(v, c) or "").endswith("Loss") for v, c in vals):
                return True
        ident = expr.id if type(expr) is ast.Name else expr.attr
        return bool(_LOSS_NAME.search(ident)) and not self.function_of(expr, ctx)

    def loop_targets(self) -> dict:
        """``(scope id, name, line) -> kind`` for loop targets whose kind the loop shows:
        ``range`` counters and ``enumerate`` indexes are host values; the batches of a
        device loader are on the device (also a loader parameter every call fills with one, in
        the module and in project mode in the other modules: :meth:`iterates_device_loader`)."""
        table = self._cache.get("looptargets")
        if table is not None:
            return table
        table = {}
        for loop in self.loops:
            node = loop.node
            if type(node) not in (ast.For, ast.AsyncFor):
                continue
            scope, line = id(loop.ctx.scope), node.lineno
            it, target = node.iter, node.target
            if type(it) is ast.Call and self._builtin(it.func, loop.ctx, ("range",)):
                for n in _target_names(target):
                    table[(scope, n, line)] = HOST
                continue
            if type(it) is ast.Call and self._builtin(it.func, loop.ctx, ("enumerate",)) \
                    and type(target) in (ast.Tuple, ast.List) and len(target.elts) == 2:
                for n in _target_names(target.elts[0]):
                    table[(scope, n, line)] = HOST
                target = target.elts[1]
            drawn = self.drawn_targets(it, target, loop.ctx)  # zip(range(n), loader), generators (attributes.py)
            for part, kind in drawn:
                for n in _target_names(part):
                    table.setdefault((scope, n, line), HOST if kind == "host" else DEVICE)
            if drawn:
                continue
            if type(target) in (ast.Tuple, ast.List) and len(target.elts) > 2:
                continue  # (data, target, paths): items past the tensors may be Python values
            if self._device_kind(node.iter, loop.ctx, 0):  # (also a parameter every caller fills with one)
                for n in _target_names(target):
                    table.setdefault((scope, n, line), DEVICE)
        self._cache["looptargets"] = table
        return table

    #: module methods whose items are the module's own tensors (``named_*``: ``(name, tensor)``)
    _PARAM_ITERS = frozenset({"parameters", "named_parameters", "buffers", "named_buffers"})

    def module_param_target(self, scope, name: str, line: int) -> str | None:
        """``DEVICE`` when ``name`` is the tensor a ``for`` loop at ``line`` of ``scope`` draws
        from ``M.parameters()`` / ``M.named_parameters()`` / ``M.buffers()`` /
        ``M.named_buffers()`` (the second item of a ``named_*`` pair), where ``M`` is a module
        visibly moved to the XLA device (:meth:`~.placement.Placement._on_device`:
        ``model = Net().to(device)``, a wrapper of one) and never moved again in the scope
        (``model.cpu()``, ``model.to("cpu")``); else None. Memoised per loop target."""
        key = ("modparam", id(scope), name, line)
        cache = self._cache
        if key in cache:
            return cache[key]
        cache[key] = None  # a cycle is unknown
        found = None
        for loop in self._for_loops_at().get((id(scope), line), ()):
            it, target = loop.node.iter, loop.node.target
            if type(it) is not ast.Call or type(it.func) is not ast.Attribute or it.func.attr not in self._PARAM_ITERS:
                continue
            if it.func.attr.startswith("named_"):
                if type(target) not in (ast.Tuple, ast.List) or len(target.elts) != 2:
                    continue
                target = target.elts[1]
            if type(target) is not ast.Name or target.id != name:
                continue
            receiver = it.func.value
            text = dotted(receiver)
            if text is None or not self._on_device(receiver, loop.ctx, 0):
                continue
            cpu = cache.get("cpu_receivers")
            if cpu is None:
                cpu = cache["cpu_receivers"] = {(id(x.scope), dotted(c.func.value)) for c, x in self.method_calls("cpu")}
            if (id(loop.ctx.scope), text) in cpu or any(self.move_target(c, x) != "xla"
                                                        for _, c, x in self.moves(text, loop.ctx)):
                continue  # moved back, or somewhere else, in the scope
            found = DEVICE
        cache[key] = found
        return found

    def backward_values(self) -> tuple[set, set]:
        """What the back-propagated losses are computed from: ids of the expressions (call
        results, arithmetic) and ``(scope id, name)`` of the parameters and loop targets.
        Followed from ``X.backward()`` through assignments, loss functions and torch ops
        (their first tensor arguments), tensor methods (their receiver), module helpers'
        returns and model-output attributes; never into a model's other arguments."""
        cached = self._cache.get("bwvals")
        if cached is not None:
            return cached
        exprs: set[int] = set()
        names: set[tuple[int, str]] = set()
        self._cache["bwvals"] = (exprs, names)  # while filling: partial answers
        backprop_unknown = self._cache["bwunknown"] = set()  # imported helpers' results back-propagated
        todo = []
        calls = self.method_calls("backward")  # .backward() calls, in the walk's order
        if any(type(c.func) is not ast.Attribute or c.func.attr != "backward"
               for c, _ in self.calls_to("torch.autograd.backward")):
            calls = self.calls  # `backward(loss)` imported by name: in order among the others
        for call, ctx in calls:
            f = call.func
            if type(f) is ast.Attribute and f.attr == "backward":
                # accelerator.backward(loss) / fabric.backward(loss): the loss is the argument
                todo.append((call.args[0] if call.args and type(f.value) in (ast.Name, ast.Attribute)
                             and not self._tensor_named(f.value) else f.value, ctx))
            elif self.call_name(call, ctx) == "torch.autograd.backward" and call.args:
                todo.append((call.args[0], ctx))
        seen: set[int] = set()
        budget = 20 * len(self.calls) + 1000
        while todo and budget > 0:
            budget -= 1
            e, ctx = todo.pop()
            if id(e) in seen or ctx is None:
                continue
            seen.add(id(e))
            t = type(e)
            if t is ast.Name:
                bindings = self.lookup(e.id, ctx, getattr(e, "lineno", None))
                for line, kind, target, b_ctx in bindings or ():
                    if kind == "value" and type(target) is ast.Call and self._library_object(target, b_ctx or ctx):
                        backprop_unknown.add(id(target))  # a helper's loss, or accelerator = Accelerator()
                        continue  # accelerator = Accelerator(): not a tensor
                    if kind == "value" and type(target) is not ast.Constant:
                        exprs.add(id(target))
                        todo.append((target, b_ctx or ctx))
                    elif kind == "item":
                        scope = b_ctx.scope if b_ctx is not None else ctx.scope
                        names.add((id(scope), e.id))
                        todo.append((target[0], b_ctx or ctx))
                    elif kind in ("unknown", "param"):
                        scope = self._param_scope(target, ctx) if kind == "param" else \
                            (b_ctx.scope if b_ctx is not None else ctx.scope)
                        names.add((id(scope), e.id))
            elif t is ast.Call:
                f = e.func
                q = self.call_name(e, ctx)
                if q is not None:
                    if q in TORCH_FACTORIES or q == "torch.asarray":
                        continue  # torch.tensor(arr, device=dev): arr is host data, a new tensor is made
                    if _torch_op(q) and e.args:
                        first = e.args[0]
                        todo.extend((x, ctx) for x in (first.elts if type(first) in (ast.List, ast.Tuple) else [first])
                                    if not _model_like(x))
                        if q.startswith("torch.nn.functional.") and len(e.args) > 1 and not _model_like(e.args[1]):
                            todo.append((e.args[1], ctx))
                    continue
                if type(f) is ast.Attribute and f.attr == "scale" and e.args:
                    todo.append((e.args[0], ctx))  # scaler.scale(loss)
                    continue
                if e.args and self._builtin(f, ctx, ("sum",)) or type(f) is ast.Attribute and f.attr == "values" \
                        and not e.args and type(f.value) is ast.Name:
                    todo.append((e.args[0] if e.args else f.value, ctx))  # sum(losses.values())
                    continue
                if not e.args and self._builtin(f, ctx, ("dict",)):  # losses = dict(ce=ce, ...)
                    todo.extend((kw.value, ctx) for kw in e.keywords if kw.arg is not None)
                    continue
                if type(f) is ast.Attribute and f.attr in LOSS_PATH_METHODS:
                    if f.attr == "to" and not self._dtype_only(e, ctx):
                        continue  # labels.to(device) is a copy: labels itself stays where it was
                    if not self._is_self(f.value, ctx):
                        todo.append((f.value, ctx))
                    continue
                funcs = self.function_of(f, ctx)
                if funcs:
                    for func in funcs:
                        todo.extend(func.returns)
                    continue
                if self.is_loss_fn(f, ctx):
                    todo.extend((a, ctx) for a in e.args[:2] if not _model_like(a))
            elif t is ast.BinOp:
                for x in (e.left, e.right):
                    if self.plain_number(x, ctx):
                        continue  # `loss / grad_accum_steps`: the divisor is a Python number
                    if type(x) in (ast.Call, ast.BinOp):  # not `args.scale`: a config value
                        todo.append((x, ctx))
                    elif type(x) is ast.Name:
                        bindings = self.lookup(x.id, ctx, getattr(x, "lineno", None)) or ()
                        if bindings and all(k == "value" and type(v) in (ast.Call, ast.BinOp, ast.Subscript)
                                            for _, k, v, _ in bindings):
                            todo.append((x, ctx))
            elif t in (ast.Subscript, ast.Attribute):
                if not self._is_self(e.value, ctx) and (t is ast.Subscript or e.attr not in HOST_ATTRS):
                    if self.qualname(e, ctx) is None:
                        todo.append((e.value, ctx))
            elif t is ast.UnaryOp:
                todo.append((e.operand, ctx))
            elif t is ast.Dict and None not in e.keys:  # losses = {"ce": ce, ...}; sum(losses.values())
                todo.extend((v, ctx) for v in e.values)
        return exprs, names

    def plain_number(self, expr: ast.AST, ctx: Ctx, _depth: int = 0) -> bool:
        """``expr`` is visibly a Python number, never a tensor: a numeric literal, ``int()`` /
        ``float()`` / ``len()`` / ``round()`` / ``abs()`` / ``min()`` / ``max()`` of anything
        (``min`` / ``max`` only of plain numbers), a ``math.`` call, an item or attribute of a
        configuration (``config["accum"]``, ``args.accum``, ``os.environ``, a name like
        ``args`` / ``config`` / ``cfg``), arithmetic of plain numbers, and a name or ``self.``
        attribute every binding of which is one of these (``grad_accum_steps =
        int(config["accum"])``). Anything else (a parameter, a helper's result) is not."""
        if _depth > 6 or ctx is None:
            return False
        key = ("plainnum", id(expr))
        found = self._cache.get(key)
        if found is None:
            self._cache[key] = False  # a cycle through names: not a plain number
            found = self._cache[key] = self._plain_number(expr, ctx, _depth)
        return found

    def _plain_number(self, expr, ctx, _depth):
        t = type(expr)
        if t is ast.Constant:
            return type(expr.value) in (int, float) or expr.value is True or expr.value is False
        if t is ast.UnaryOp:
            return self.plain_number(expr.operand, ctx, _depth + 1)
        if t is ast.BinOp:
            return self.plain_number(expr.left, ctx, _depth + 1) and self.plain_number(expr.right, ctx, _depth + 1)
        if t is ast.Call:
            name = self._builtin(expr.func, ctx, ("int", "float", "len", "round", "abs", "min", "max"))
            if name in ("min", "max"):
                return bool(expr.args) and not expr.keywords \
                    and all(self.plain_number(a, ctx, _depth + 1) for a in expr.args)
            if name is not None:
                return True
            q = self.call_name(expr, ctx)
            return q is not None and q.startswith("math.")
        if t in (ast.Subscript, ast.Attribute):
            root = expr
            while type(root) in (ast.Subscript, ast.Attribute):
                if type(root) is ast.Attribute and self._is_self(root.value, ctx):
                    vals = self.values(root, ctx)  # self.grad_accum_steps = int(...) in __init__
                    return bool(vals) and all(v is not None and self.plain_number(v, c, _depth + 1)
                                              for v, c in vals)
                root = root.value
            if self.qualname(root, ctx) == "os.environ" or self.qualname(expr, ctx) == "os.environ":
                return False  # a string, never a number (and never a tensor: nothing to follow)
            return type(root) is ast.Name and _CONFIG_NAME.fullmatch(root.id) is not None
        if t is ast.Name:
            bindings = self._bindings_before(expr, ctx)
            return bool(bindings) and all(k == "value" and self.plain_number(v, b or ctx, _depth + 1)
                                          for _, k, v, b in bindings)
        return False

    def _dtype_only(self, call, ctx) -> bool:
        """``x.to(torch.float32)`` / ``x.to(dtype=...)``: a conversion on the same device."""
        if any(kw.arg not in ("dtype", "non_blocking", "copy") for kw in call.keywords):
            return False
        for a in call.args:
            q = self.qualname(a, ctx)
            if q is None or not q.startswith("torch.") or q.rsplit(".", 1)[1] not in _DTYPES:
                return False
        return bool(call.args) or any(kw.arg == "dtype" for kw in call.keywords)

    def _library_object(self, call, ctx) -> bool:
        q = self.call_name(call, ctx)
        return q is not None and not _torch_op(q) and q not in TORCH_FACTORIES

    @staticmethod
    def _tensor_named(expr) -> bool:
        ident = expr.id if type(expr) is ast.Name else expr.attr
        return bool(_LOSS_NAME.search(ident))

    @staticmethod
    def _is_self(expr, ctx) -> bool:
        func = ctx.func if ctx is not None else None
        return type(expr) is ast.Name and func is not None and func.cls is not None \
            and bool(func.params) and expr.id == func.params[0]

    # ------------------------------------------------------------------ the step
    def _steps_flat(self) -> set[int]:
        """ids of functions that run backward / an optimizer step once per call: outside any
        loop of their own, directly or through such a helper (bounded depth)."""
        table = self._cache.get("stepsflat")
        if table is not None:
            return table
        if not self.step_markers():
            table = self._cache["stepsflat"] = set()
            return table
        # only what runs once per call, outside the function's own loops
        direct = {id(x.func): True for _, x in self.step_markers().values() if x.func is not None and not x.loops}
        closed = self.closure_over_callers("stepsflat_closure", direct, self._callers(flat=True) if direct else {})
        table = self._cache["stepsflat"] = {fid for fid, holds in closed.items() if holds}
        return table

    def is_inner_step_loop(self, loop) -> bool:
        """A step loop whose own body (not a nested loop) runs the backward or the optimizer
        step, or calls a helper that does so outside its own loops: the loop an iteration of
        which is one training step. An epoch loop around it is not."""
        if not self.step_markers():
            return False
        key = ("innerstep", id(loop))
        if key in self._cache:
            return self._cache[key]
        flat = self._steps_flat()
        result = False
        for call, cx in loop.calls:
            if not cx.loops or cx.loops[-1] is not loop:
                continue
            if self._is_step_marker(call, cx) or any(id(f) in flat for f in self.function_of(call.func, cx)):
                result = True
                break
        self._cache[key] = result
        return result

    def step_sites(self) -> list[tuple[ast.AST, Ctx, bool, str]]:
        """Nodes of the step: ``(node, ctx, gated, where)`` for every expression and
        statement that runs once per step (``where`` is ``"loop"``, ``"helper"`` or
        ``"forward"``). Empty under eager mode. Each node once; gated only when every way
        to it passes a step gate."""
        cached = self._cache.get("stepsites")
        if cached is not None:
            return cached
        out: list = []
        self._cache["stepsites"] = out
        self._step_callers: dict[int, list] = {}  # id(function) -> the step's calls of it
        self._cache["stepcallers"] = self._step_callers
        self._cache["postsync"] = []  # what follows each sync statement the walk meets
        if self.eager_mode():
            return out
        # regions: (statements, base ctx, gated, where); helpers found on the way
        regions = []
        loops = [lp for lp in self.loops if self.is_inner_step_loop(lp) and self.in_xla_code(lp.ctx)
                 and (self.loop_steps_optimizer(lp) or any(self.loop_steps_optimizer(o) for o in lp.ctx.loops))]
        loop_nodes = {id(lp.node) for lp in loops}
        for lp in loops:
            if any(id(o.node) in loop_nodes for o in lp.ctx.loops):
                continue  # walked with the step loop around it
            regions.append((lp.node, lp.ctx, "loop"))
        func_state: dict[int, bool] = {}  # id(func) -> gated (False wins)
        funcs_by_id = {id(f): f for f in self.functions}
        compiled = self._compiled_ids()
        for f in self.functions:
            if f.name == "forward" and f.cls is not None and self.is_module_class(f.cls) \
                    and f.scope is not None and self.in_xla_code(Ctx(f.scope, f, (), ())):  # (project reach is per function)
                func_state[id(f)] = False
            elif id(f) in compiled:
                func_state[id(f)] = False
        for call, cx in self.calls_to(*self.COMPILERS):
            for g in self.function_of(call, cx):
                func_state[id(g)] = False
        if self.project_callers is not None:  # methods another module's step calls (callbacks)
            for f in self.functions:
                if id(f) not in func_state:
                    calls = self.project_step_calls(f)
                    if calls:
                        func_state[id(f)] = all(c.gated for c in calls)
        # walk loops, then helpers breadth first (each at most twice: gated, then ungated)
        sites: dict[int, list] = {}
        pending = []
        for node, ctx, where in regions:
            self._walk_step(node, ctx, where, False, sites, pending, loop_root=True)
        for fid, gated in func_state.items():
            pending.append((funcs_by_id[fid], gated, 0))
        walked: dict[int, bool] = {}
        while pending:
            func, gated, depth = pending.pop(0)
            fid = id(func)
            prev = walked.get(fid)
            if prev is not None and (prev is False or gated):
                continue
            walked[fid] = gated
            if depth > self.HELPER_DEPTH or func.scope is None:
                continue
            where = "forward" if func.name == "forward" and func.cls is not None else "helper"
            ctx = Ctx(func.scope, func, (), ())
            self._walk_step(func.node, ctx, where, gated, sites, pending, depth=depth)
        for entries in sites.values():
            best = min(entries, key=lambda s: s[2])  # ungated wins
            out.append(best)
        out.sort(key=lambda s: (getattr(s[0], "lineno", 0), getattr(s[0], "col_offset", 0)))
        return out

    def _walk_step(self, root, ctx, where, gated, sites, pending, loop_root=False, depth=0):
        """Walk one step region (a loop or a function body) in source order."""
        closure_ids = self._closure_args()
        body = root.body
        # stack of (statement list, index, gated); statements in order to see syncs
        stack = [(body, 0, gated)]
        if type(root) in (ast.For, ast.AsyncFor):
            pass  # the iterable runs once per loop: not the step
        elif type(root) is ast.While:
            self._walk_expr(root.test, ctx, gated, where, sites, pending, closure_ids, depth, is_test=root)
        while stack:
            stmts, i, g = stack.pop()
            if i >= len(stmts):
                continue
            stmt = stmts[i]
            if self._is_sync_stmt(stmt, ctx):
                self._cache["postsync"].append((stmts, i + 1, g, ctx, where))  # (syncs.post_sync_sites)
                if type(stmt) in (ast.With, ast.AsyncWith):
                    stack.append((stmt.body, 0, g))  # the block runs before the sync at its end
                continue  # the rest of this block runs after the step's sync
            stack.append((stmts, i + 1, g))
            t = type(stmt)
            if t in _SKIP_NODES:
                continue
            if t is ast.If:
                if self.dead_blocks:  # `if False:` / `if DEBUG:` (walk.py): walk the branch that runs
                    dead_body = bool(stmt.body) and self.in_dead_code(stmt.body[0].lineno, stmt.body[0].col_offset)
                    if dead_body or (stmt.orelse and self.in_dead_code(stmt.orelse[0].lineno,
                                                                       stmt.orelse[0].col_offset)):
                        self._walk_expr(stmt.test, ctx, g, where, sites, pending, closure_ids, depth)
                        stack.append((stmt.orelse if dead_body else stmt.body, 0, g))
                        continue
                if self._once_test(stmt.test, ctx, root):  # `if batch_idx == 0:` runs once, not every step
                    self._walk_expr(stmt.test, ctx, g, where, sites, pending, closure_ids, depth)
                    stack.append((stmt.orelse, 0, g))
                    continue
                side = self._training_side(stmt, root, ctx)
                if side:  # `if train: backward; step else: total += loss.item()`: an evaluation pass
                    self._walk_expr(stmt.test, ctx, g, where, sites, pending, closure_ids, depth, is_test=stmt)
                    stack.append((stmt.body if side > 0 else stmt.orelse, 0, g))
                    branch = stmt.body if side > 0 else stmt.orelse
                    if side > 0 and branch and isinstance(branch[-1], (ast.Continue, ast.Return, ast.Break)):
                        stack[-2] = (stmts, len(stmts), g)  # (`if train: ...; continue`: the rest is evaluation)
                    continue
                polarity = self._gate_polarity(stmt.test, ctx)
                if not g and polarity:
                    self._walk_expr(stmt.test, ctx, g, where, sites, pending, closure_ids, depth)
                else:
                    self._walk_expr(stmt.test, ctx, g, where, sites, pending, closure_ids, depth, is_test=stmt)
                if polarity < 0 and stmt.body and isinstance(stmt.body[-1], (ast.Continue, ast.Return, ast.Break)):
                    stack[-1] = (stmts, i + 1, True)  # `if step % N != 0: continue`: the rest is gated
                stack.append((stmt.orelse, 0, g or polarity < 0))
                stack.append((stmt.body, 0, g or polarity > 0))
                continue
            if self._eval_loop(stmt, ctx):
                continue  # an evaluation pass over its own loader: not the training step
            if t is ast.While:
                self._walk_expr(stmt.test, ctx, g, where, sites, pending, closure_ids, depth, is_test=stmt)
            if t is ast.Assert:
                self._walk_expr(stmt.test, ctx, g, where, sites, pending, closure_ids, depth, is_test=stmt)
                if stmt.msg is not None:
                    self._walk_expr(stmt.msg, ctx, g, where, sites, pending, closure_ids, depth)
                continue
            blocks = []
            plan = _STMT_FIELDS.get(t)
            if plan is None:
                plan = _STMT_FIELDS[t] = _stmt_fields(t)
            for field, is_block in plan:
                value = getattr(stmt, field, None)
                if is_block:
                    if value:
                        blocks.append((value, g))
                elif type(value) is list:
                    for v in value:
                        if type(v) is ast.ExceptHandler:
                            blocks.append((v.body, g))
                        elif type(v) is ast.withitem:
                            self._walk_expr(v.context_expr, ctx, g, where, sites, pending, closure_ids, depth)
                        elif type(v) is ast.match_case:
                            blocks.append((v.body, g or self._gate_polarity(_case_test(v), ctx) > 0))
                        elif isinstance(v, ast.expr):
                            self._walk_expr(v, ctx, g, where, sites, pending, closure_ids, depth)
                elif isinstance(value, ast.expr):
                    self._walk_expr(value, ctx, g, where, sites, pending, closure_ids, depth)
            for block, bg in reversed(blocks):
                stack.append((block, 0, bg))

    def _walk_expr(self, expr, ctx, gated, where, sites, pending, closure_ids, depth, is_test=None):
        if is_test is not None:
            sites.setdefault(id(is_test), []).append((is_test, ctx, gated, where))
        todo = [expr]
        while todo:
            n = todo.pop()
            t = type(n)
            if t in _LEAVES or t in _SKIP_NODES or id(n) in closure_ids:
                continue
            if t is ast.Call:
                cctx = self.call_ctx(n) or ctx
                sites.setdefault(id(n), []).append((n, cctx, gated, where))
                for f in self.function_of(n.func, cctx):
                    pending.append((f, gated, depth + 1))
                    self._step_callers.setdefault(id(f), []).append((n, cctx))
            elif t in _SITE_NODES:
                sites.setdefault(id(n), []).append((n, ctx, gated, where))
            for field in _child_fields(t):  # the model walk's: fields that can hold a node
                v = getattr(n, field, None)
                if type(v) is list:
                    todo.extend(v)  # (a None in a dict's keys is a leaf)
                elif v is not None:
                    todo.append(v)

    def _closure_args(self) -> set[int]:
        """ids of the argument expressions of every ``xm.add_step_closure(...)`` call."""
        table = self._cache.get("closureargs")
        if table is None:
            table = set()
            for call, _ in self.calls_to(ADD_STEP_CLOSURE):
                table.update(id(a) for a in call.args)
                table.update(id(k.value) for k in call.keywords)
            self._cache["closureargs"] = table
        return table

    def _is_sync_stmt(self, stmt, ctx) -> bool:
        """A statement after which the step's graph has run: a sync, ``xm.wait_device_ops()``,
        ``xm.optimizer_step(..., barrier=True)``, a call of a compiled step, or a
        ``with torch_xla.step():`` block."""
        t = type(stmt)
        if t in (ast.With, ast.AsyncWith):  # (also a context manager of the module whose __exit__ syncs)
            return any(type(i.context_expr) is ast.Call
                       and (self.call_name(i.context_expr, self.call_ctx(i.context_expr) or ctx) in STEP_SCOPES
                            or any(self.func_syncs(f) for f in self._mro_methods_exit(i.context_expr, ctx)))
                       for i in stmt.items)
        value = stmt.value if t in (ast.Expr, ast.Assign, ast.AnnAssign) else None
        if type(value) is not ast.Call:
            return False
        cctx = self.call_ctx(value) or ctx
        if self.is_sync_call(value, cctx):
            return not self.redundant_barrier(value, cctx)
        if self.call_name(value, cctx) in WAITS:
            return True
        funcs = self.function_of(value.func, cctx)
        if funcs and all(self._compiled(f) for f in funcs):
            return True
        if self.call_name(value, cctx) is None and type(value.func) in (ast.Name, ast.Attribute):
            vals = self.values(value.func, cctx)
            if vals and all(type(v) is ast.Call and self.call_name(v, c) in self.COMPILERS for v, c in vals):
                return True
        return False

    def step_param_device(self, expr: ast.AST, ctx: Ctx, _depth: int = 0) -> bool:
        """``expr`` is a parameter of the function at ``ctx`` (every binding its read sees)
        and some call of that function in the step code (:meth:`step_sites`) passes a device
        tensor for it, directly or through a parameter of its own caller (a few levels):
        ``meter.update(loss.detach())`` in the step loop makes ``val`` of ``def update(self,
        val)`` a device tensor there. "Some call", not every call: for the host reads of the
        step (XLA501 / XLA507) one call from the step that passes a device tensor is a sync
        each step, whatever other callers pass."""
        func = ctx.func
        if type(expr) is not ast.Name or func is None or _depth > 3:
            return False
        if self.guarded_reads and self.guarded_not_device(expr, ctx):
            return False  # `if isinstance(x, float):` around the read
        kwargs = self._kwargs_value_of(expr, ctx)
        if kwargs is not None:  # for k, v in kwargs.items(): one of the keyword arguments
            return self._step_kwargs_device(func)
        self.step_sites()
        calls = self._cache["stepcallers"].get(id(func))
        if not calls:
            return self._project_step_param_device(expr, ctx)
        if not self._own_param(expr, func, ctx):
            return False
        key = ("stepparam", id(func), expr.id)
        cache = self._cache
        if key in cache:
            return cache[key]
        cache[key] = False  # a cycle of calls: no
        found = False
        for call, cctx in calls:
            arg = self.argument_for(call, cctx, func, expr.id)
            if not isinstance(arg, ast.AST) or arg is UNKNOWN:
                continue
            if self.tensor_kind(arg, cctx) == DEVICE or self.step_param_device(arg, cctx, _depth + 1):
                found = True
                break
        cache[key] = found
        return found

    def _kwargs_value_of(self, expr: ast.Name, ctx: Ctx) -> str | None:
        """The ``**kwargs`` parameter of the function at ``ctx`` when ``expr`` is the value
        target of an enclosing ``for k, v in kwargs.items():`` / ``for v in kwargs.values():``
        over it (nothing rebinding the target in the body, nor ``kwargs`` anywhere); else
        ``None``."""
        func = ctx.func
        kwarg = func.node.args.kwarg if func is not None and hasattr(func.node, "args") else None
        if kwarg is None:
            return None
        for lp in reversed(ctx.loops):
            node = lp.node
            if type(node) not in (ast.For, ast.AsyncFor) or lp.ctx.func is not func:
                continue
            it, target = node.iter, node.target
            if type(it) is not ast.Call or type(it.func) is not ast.Attribute or it.args \
                    or type(it.func.value) is not ast.Name or it.func.value.id != kwarg.arg:
                continue
            if it.func.attr == "items" and type(target) is ast.Tuple and len(target.elts) == 2:
                value = target.elts[1]
            elif it.func.attr == "values":
                value = target
            else:
                continue
            if type(value) is not ast.Name or value.id != expr.id:
                return None
            if any(line != node.lineno for line, _, _, _ in self._bindings_before(expr, ctx) or [(None, "", None, None)]):
                return None  # (the read sees the loop target only: `v = v.item()` reads it first)
            bindings = self._bindings_before(it.func.value, lp.ctx)
            if not bindings or any(kind != "param" or target is not func for _, kind, target, _ in bindings):
                return None
            return kwarg.arg
        return None

    def _step_kwargs_device(self, func: FunctionInfo) -> bool:
        """Some call of ``func`` from the step (:meth:`step_sites`; in project mode also
        :meth:`project_step_calls`) passes a device tensor as a keyword argument that no
        named parameter takes (``meter.update(loss=loss, lr=lr)`` into ``def update(self,
        **kwargs)``). Memoised per function."""
        key = ("stepkwargs", id(func))
        cache = self._cache
        if key in cache:
            return cache[key]
        cache[key] = False
        named = set(func.params) | {a.arg for a in func.node.args.kwonlyargs}
        self.step_sites()
        found = any(k.arg is not None and k.arg not in named and self.tensor_kind(k.value, cctx) == DEVICE
                    for call, cctx in self._cache["stepcallers"].get(id(func), ()) for k in call.keywords)
        if not found and self.project_lookup is not None:
            found = any(n not in named and a.kind == "device_tensor"
                        for c in self.project_step_calls(func) for n, a in c.kwargs)
        cache[key] = found
        return found

    def step_param_item_device(self, expr: ast.Subscript, ctx: Ctx) -> bool:
        """``p["k"]`` for a parameter ``p`` of the function at ``ctx`` that nothing rebinds and
        the function only reads items of (:meth:`dict_uses`), where some call of that
        function in the step code passes a dict whose ``"k"`` is a device tensor (``outputs
        = {"loss": loss.detach()}; cb.on_step_end(self, step, outputs)``, the caller handing
        the name to no other call): in the module (:meth:`step_sites`' callers) or, in
        project mode, from another module's step (an argument of kind ``device_dict`` naming
        ``"k"``). As :meth:`step_param_device`: "some call", for the host reads of the step.
        Memoised per (function, parameter): the device keys of every step caller at once."""
        func = ctx.func
        key = expr.slice
        if func is None or type(expr.value) is not ast.Name or type(key) is not ast.Constant \
                or type(key.value) is not str:
            return False
        name = expr.value
        if not self._own_param(name, func, ctx):
            return False
        memo = ("stepitems", id(func), name.id)
        cache = self._cache
        keys = cache.get(memo)
        if keys is None:
            keys = cache[memo] = self._step_item_keys(func, name.id)
        return key.value in keys or "*" in keys

    def _step_item_keys(self, func: FunctionInfo, name: str) -> frozenset[str]:
        """The string keys some step call of ``func`` passes a device tensor under in its dict
        for parameter ``name`` (:meth:`step_param_item_device`); one pass over the callers."""
        escaped, handed = self.dict_uses(func, name)
        if escaped or handed:
            return frozenset()  # the helper changes it, or hands it on
        self.step_sites()
        keys: set[str] = set()
        for call, cctx in self._cache["stepcallers"].get(id(func), ()):
            arg = self.argument_for(call, cctx, func, name)
            if isinstance(arg, ast.AST) and arg is not UNKNOWN:
                keys.update(self.dict_device_keys(arg, cctx, passed_to=call))
        index = self._caller_index(func, name)
        if index is not None:
            for c in self.project_step_calls(func):
                a = c.argument(index, name)
                if a is not None and a.kind == "device_dict":
                    keys.update(a.keys)
                elif a is not None and a.kind == "device_tensor":
                    keys.add("*")  # (a device value read by key: a model output's items are device tensors)
        return frozenset(keys)

    def dict_device_keys(self, expr: ast.AST, ctx: Ctx, passed_to: ast.Call | None = None) -> tuple[str, ...]:
        """The string keys of the dict display ``expr`` holds (:meth:`dict_display`; a name
        handed to no call but ``passed_to``) whose values are device tensors, in display
        order; ``()`` when none or no such display."""
        found = self.dict_display(expr, ctx, passed_to)
        if found is None:
            return ()
        display, dctx = found
        return tuple(dict.fromkeys(k.value for k, v in zip(display.keys, display.values)
                                   if type(k) is ast.Constant and type(k.value) is str
                                   and self.tensor_kind(v, dctx) == DEVICE))

    def device_attrs(self, cls) -> tuple[str, ...]:
        """The ``self.<attr>`` names methods of class ``cls`` (its own) set, in XLA code, to a
        device tensor (``self.last_loss = loss.detach()``; ``None`` elsewhere does not matter:
        for the step's host reads one such value is a sync). Memoised per class."""
        key = ("devattrs", id(cls))
        found = self._cache.get(key)
        if found is None:
            found = self._cache[key] = tuple(
                attr for attr, values in cls.attrs.items()
                if any(v is not None and c is not None and self.in_xla_code(c) and self.tensor_kind(v, c) == DEVICE
                       for v, c in values[:16]))
        return found

    def step_param_attr_device(self, expr: ast.Attribute, ctx: Ctx) -> bool:
        """``p.attr`` for a parameter ``p`` of the function at ``ctx`` that nothing rebinds,
        where some call of that function from the step passes an instance whose class sets
        ``self.attr`` to a device tensor (:meth:`device_attrs`): a callback's
        ``trainer.last_loss.item()`` dispatched ``cb.on_step_end(self, logs)`` by a trainer
        whose step sets ``self.last_loss = loss.detach()``; in the module (the instance
        ``self`` of a method of the class, or one :meth:`instance_class` names) or, in project
        mode, from another module's step (an ``instance`` argument: the class's
        ``HelperFacts.device_attrs``). Memoised per (function, parameter): the device
        attributes of every step caller's instance at once."""
        func = ctx.func
        name = expr.value
        if func is None or type(name) is not ast.Name or not self._own_param(name, func, ctx):
            return False
        memo = ("stepattrs", id(func), name.id)
        attrs = self._cache.get(memo)
        if attrs is None:
            attrs = self._cache[memo] = self._step_attr_names(func, name.id)
        return expr.attr in attrs

    def _step_attr_names(self, func: FunctionInfo, name: str) -> frozenset[str]:
        """The device attributes (:meth:`device_attrs`) of the instances some step call of
        ``func`` passes for parameter ``name`` (:meth:`step_param_attr_device`)."""
        self.step_sites()
        attrs: set[str] = set()
        for call, cctx in self._cache["stepcallers"].get(id(func), ()):
            arg = self.argument_for(call, cctx, func, name)
            if not isinstance(arg, ast.AST) or arg is UNKNOWN:
                continue
            caller = cctx.func
            if type(arg) is ast.Name and caller is not None and caller.cls is not None and caller.params \
                    and arg.id == caller.params[0]:
                cls = caller.cls  # cb.on_step_end(self, ...) in a method of the trainer
            else:
                inst = self.instance_class(arg, cctx)
                cls = inst[1] if inst is not None and inst[0] == "local" else None
            if cls is not None:
                attrs.update(self.device_attrs(cls))
        index = self._caller_index(func, name)
        if self.project_lookup is None or index is None:
            return frozenset(attrs)
        for c in self.project_step_calls(func):
            a = c.argument(index, name)
            if a is None or a.kind != "instance":
                continue
            for ref in a.refs:
                try:
                    facts = self.project_lookup((), cls=ref)
                except (Exception, RecursionError):
                    facts = None
                if facts is not None:
                    attrs.update(facts.device_attrs)
        return frozenset(attrs)

    def _project_step_param_device(self, expr: ast.Name, ctx: Ctx) -> bool:
        """:meth:`step_param_device` for a function or method that other project modules call
        from their step (:meth:`project_step_calls`): some such call passes a device tensor
        for the parameter."""
        func = ctx.func
        steps = self.project_step_calls(func)
        index = self._caller_index(func, expr.id)
        if not steps or index is None or not self._own_param(expr, func, ctx):
            return False
        return any((a := c.argument(index, expr.id)) is not None and a.kind == "device_tensor" for c in steps)

    def _own_param(self, name: ast.Name, func: FunctionInfo, ctx: Ctx) -> bool:
        """Every binding the read ``name`` at ``ctx`` sees is a parameter of ``func`` (nothing rebinds it)."""
        bindings = self._bindings_before(name, ctx)
        return bool(bindings) and all(kind == "param" and target is func for _, kind, target, _ in bindings)

    @staticmethod
    def _caller_index(func: FunctionInfo, name: str) -> int | None:
        """The position of parameter ``name`` among the arguments callers pass (``self`` of a
        method not counted: :meth:`~flake8_xla.project.callers.CallFacts.argument`); None
        when ``func`` has no such positional parameter."""
        params = func.params[1:] if func.cls is not None else func.params
        return params.index(name) if name in params else None

    def redundant_barrier(self, call: ast.Call, ctx: Ctx) -> bool:
        """``xm.optimizer_step(opt, barrier=True)`` directly in a loop over a device loader,
        which syncs every batch itself: XLA204 reports the barrier and its fix drops it, so the
        step's code after it is judged as if it were gone (a read there will sync)."""
        return self.call_name(call, ctx) == OPTIMIZER_STEP and bool(ctx.loops) \
            and self.const(self.kwarg(call, "barrier", 1), ctx) is True \
            and self.kwarg(call, "optimizer", 0) is not None and self.iterates_device_loader(ctx.loops[-1])

    def _is_gate(self, test, ctx=None) -> bool:
        """``if step % N == 0:``: the body runs every N steps (see :meth:`_gate_polarity`)."""
        return self._gate_polarity(test, ctx) > 0

    def _gate_polarity(self, test, ctx=None, _depth: int = 0) -> int:
        """+1 when the body of ``if test:`` runs every N steps (``step % N == 0``,
        ``(i + 1) % N == 0``, ``not step % N``, such a test inside ``and``, or inside ``or``
        with other conditions such as ``last_batch``, or a name bound to one); -1 when the
        ``else`` does (``step % N != 0``, ``if step % N:``); 0 otherwise. ``test`` may be the
        frame test of a literal ``case`` (its value, or the ``MatchOr``): +1 when the match
        subject is ``step % N`` or a name bound to it (``match step % N: case 0:``)."""
        if _depth > _GATE_LIMIT:
            return 0
        subject = self.case_subjects.get(id(test))
        if subject is not None:  # `match step % N:` / `case 0:` or `case 0 | 50:` (walk.py)
            if type(test) is ast.MatchOr and not all(type(p) is ast.MatchValue for p in test.patterns):
                return 0
            if _mod_of_name(subject):
                return 1
            if type(subject) is ast.Name and ctx is not None:  # phase = step % N; match phase:
                values = self.values(subject, ctx)
                return 1 if values and len(values) == 1 and _mod_of_name(values[0][0]) else 0
            return 0
        t = type(test)
        if t is ast.BoolOp:
            signs = [self._gate_polarity(v, ctx, _depth + 1) for v in test.values]
            if type(test.op) is ast.And:
                return 1 if 1 in signs else 0
            return 1 if 1 in signs and -1 not in signs else 0
        if t is ast.UnaryOp and type(test.op) is ast.Not:
            if _mod_of_name(test.operand):
                return 1
            return -self._gate_polarity(test.operand, ctx, _depth + 1)
        if _mod_of_name(test):
            return -1  # `if step % N:` runs on every step but the N-th
        if t is ast.Compare and len(test.ops) == 1 and type(test.ops[0]) in (ast.Eq, ast.NotEq):
            if any(_mod_of_name(side) for side in (test.left, test.comparators[0])):
                return 1 if type(test.ops[0]) is ast.Eq else -1
        if t is ast.Name and ctx is not None:  # should_log = step % N == 0
            values = self.values(test, ctx)
            if values and len(values) == 1 and values[0][1] is not None:
                return self._gate_polarity(values[0][0], values[0][1], _depth + 1)
        return 0

    def _once_test(self, test, ctx, root=None, _depth: int = 0) -> bool:
        """The body of ``if test:`` runs on one iteration only: ``counter == K`` (``K`` an int
        literal, either side), also as an operand of ``and``, where the counter is the
        ``enumerate`` index or ``range`` target of a loop around the test, or a name of the
        function bound only to int literals and ``+= 1`` (``global_step``)."""
        t = type(test)
        if t is ast.BoolOp and type(test.op) is ast.And and _depth < _GATE_LIMIT:
            return any(self._once_test(v, ctx, root, _depth + 1) for v in test.values)
        if t is not ast.Compare or len(test.ops) != 1 or type(test.ops[0]) is not ast.Eq:
            return False
        left, right = test.left, test.comparators[0]
        if type(left) is ast.Constant:
            left, right = right, left
        if type(left) is not ast.Name or type(right) is not ast.Constant or type(right.value) is not int:
            return False
        return self._step_counter(left, ctx, root)

    def _step_counter(self, name: ast.Name, ctx, root=None) -> bool:
        """``name`` counts the iterations of the step loop ``root`` itself (not of a loop
        around it: ``epoch == 0`` holds for a whole epoch of steps): its ``enumerate`` index or
        ``range`` target, or a name of the function whose bindings are int literals before
        the loop and ``name += 1`` inside it."""
        if type(root) not in (ast.For, ast.AsyncFor, ast.While) or ctx.func is None:
            return False
        if type(root) is not ast.While and type(root.iter) is ast.Call:
            target = root.target
            if self._builtin(root.iter.func, ctx, ("enumerate",)) and type(target) in (ast.Tuple, ast.List) \
                    and target.elts:
                target = target.elts[0]
            elif not self._builtin(root.iter.func, ctx, ("range",)):
                target = None
            if type(target) is ast.Name and target.id == name.id:
                return True
        bindings = self.lookup(name.id, ctx, None)
        if not bindings:
            return False
        key = ("counters", id(ctx.func))
        steps = self._cache.get(key)
        if steps is None:  # (name, line) of `name += 1` in the function
            steps = self._cache[key] = {
                (n.target.id, n.lineno) for n in ast.walk(ctx.func.node)
                if type(n) is ast.AugAssign and type(n.op) is ast.Add and type(n.target) is ast.Name
                and type(n.value) is ast.Constant and n.value.value == 1}
        lo, hi = root.lineno, getattr(root, "end_lineno", None) or root.lineno
        counted = False
        for line, kind, target, _ in bindings:
            inside = lo <= line <= hi
            if not inside and kind == "value" and type(target) is ast.Constant and type(target.value) is int:
                continue  # global_step = 0 before the loop
            if not inside or (name.id, line) not in steps:
                return False
            counted = True
        return counted

    def _mro_methods_exit(self, call: ast.Call, ctx) -> list:
        """The ``__exit__`` of the module class ``call`` builds as a ``with`` item."""
        return [f for f in self.context_methods(call, self.call_ctx(call) or ctx) if f.name == "__exit__"]

    def _training_side(self, stmt: ast.If, root, ctx) -> int:
        """1 when the ``if``'s body holds every step marker (backward, optimizer step, a
        helper running one) the step region ``root`` has in its function and the ``else``
        none: an iteration taking the ``else`` (or, after a body ending in ``continue``, the
        rest of the block) trains nothing, it evaluates (``if train: loss.backward();
        opt.step() else: total += loss.item()``); -1 the other way round; 0 otherwise (no
        marker, markers on both sides or outside the ``if``: ``if (i + 1) % accum == 0:
        opt.step()`` after an unconditional backward)."""
        markers = self._cache.get("markers_by_func")
        if markers is None:  # id(function) -> the sorted lines of its step markers, built once
            markers = self._cache["markers_by_func"] = {}
            for call, cx in self.step_markers().values():
                markers.setdefault(id(cx.func), []).append(call.lineno)
            for lines in markers.values():
                lines.sort()
        own = markers.get(id(ctx.func))
        if not own:
            return 0

        def count(a: int, b: int) -> int:  # markers on lines a..b (bisect: an `if` costs log M, not M)
            return bisect.bisect_right(own, b) - bisect.bisect_left(own, a)

        lo, hi = root.lineno, getattr(root, "end_lineno", None) or root.lineno
        if type(root) in (ast.FunctionDef, ast.AsyncFunctionDef):
            lo = root.body[0].lineno if root.body else lo
        inside = count(lo, hi)
        if not inside:
            return 0

        def within(block) -> bool:
            if not block:
                return False
            b_lo, b_hi = block[0].lineno, getattr(block[-1], "end_lineno", None) or block[-1].lineno
            return count(b_lo, b_hi) == inside

        if within(stmt.body):
            return 1
        if within(stmt.orelse):
            return -1
        return 0

    def _eval_loop(self, stmt, ctx) -> bool:
        """A loop over a data loader inside the step that runs no backward pass or optimizer
        step: an evaluation pass (``evaluate(model, val_loader)`` every N steps), not the step."""
        if type(stmt) not in (ast.For, ast.AsyncFor):
            return False
        index = self._cache.get("loopindex")
        if index is None:
            index = self._cache["loopindex"] = {id(lp.node): lp for lp in self.loops}
        loop = index.get(id(stmt))
        return loop is not None and not self.is_step_loop(loop) \
            and self.loader_kind(stmt.iter, ctx) in ("plain", "device")


def _mod_of_name(node) -> bool:
    """``step % N`` / ``(i + 1) % N`` (the left side is not a literal or a format string)."""
    return type(node) is ast.BinOp and type(node.op) is ast.Mod \
        and type(node.left) not in (ast.Constant, ast.JoinedStr)


_CONFIG_NAME = re.compile(r"(?i)_*(args|config|cfg|conf|hparams|hp|opts?|params|settings|flags|FLAGS)")
_MODEL_NAME = re.compile(r"(?i)model|net|module|self|config|args|cfg|opt")


def _model_like(expr) -> bool:
    """An argument named like a model, config or optimizer: not a tensor of the loss."""
    ident = expr.id if type(expr) is ast.Name else expr.attr if type(expr) is ast.Attribute else None
    return ident is not None and bool(_MODEL_NAME.search(ident))


def _target_names(target) -> list[str]:
    out = []
    todo = [target]
    while todo:
        n = todo.pop()
        if type(n) is ast.Name:
            out.append(n.id)
        elif type(n) in (ast.Tuple, ast.List):
            todo.extend(n.elts)
        elif type(n) is ast.Starred:
            todo.append(n.value)
    return out
