"""XLA6 (checkpoints and ranks): what a checkpoint holds, who writes it, and which master
guards a once-per-run action."""

from __future__ import annotations

import ast
import bisect
import re

from .. import api_table
from ..model import UNKNOWN
from ..model.runtime import XLA_DEVICE_CALLS
from ..model.scopes import expr_key
from ..project.callers import HOST_COPY
from ..registry import Rule, rule
from ..model.effects import shared_effect
from ._common import at_least, source_text

TORCH_SAVE = "torch.save"
XM_SAVE = "torch_xla.core.xla_model.save"
XSER_SAVE = "torch_xla.utils.serialization.save"
SAVES = (XM_SAVE, XSER_SAVE)
MASTER_TEST = "torch_xla.core.xla_model.is_master_ordinal"
XLA_FSDP = "torch_xla.distributed.fsdp.XlaFullyShardedDataParallel"
TO_CPU = "torch_xla.core.xla_model._maybe_convert_to_cpu"
#: calls whose result holds what their arguments hold
_PASS_THROUGH = frozenset({"copy.deepcopy", "copy.copy", "collections.OrderedDict"})
#: objects with a state_dict() of Python values only (schedulers, scalers, samplers, loaders)
_PYTHON_STATE = re.compile(r"(?i)sched|scaler|sampler|loader|dataset|tokenizer|config|cfg|args|stopp|early|lr_|rng|"
                           r"meter|tracker|progress|callback|logger|writer|state_machine")
#: names that hold a module or an optimizer (their state is tensors on the model's device)
_TENSOR_STATE = re.compile(r"(?i)model|net|module|opt|encoder|decoder|generator|discriminator|critic|ema|backbone|"
                           r"classifier|transformer|unet|vae|policy|actor")
_PYTHON_STATE_CLASSES = ("torch.optim.lr_scheduler.", "torch.cuda.amp.", "torch.amp.", "torch_xla.amp.",
                         "torch.utils.data.")
_WRAPPED = frozenset({"to", "train", "eval", "float", "half", "bfloat16", "double", "requires_grad_"})


def _same_device(model, call, ctx) -> bool:
    """A call that returns its receiver (or a copy) on the same device: ``.half()``,
    ``.float()``, ``.eval()``, ``.to(torch.float16)`` / ``.to(dtype=...)``."""
    f = call.func
    return type(f) is ast.Attribute and (f.attr in _WRAPPED - {"to"} or (f.attr == "to" and model._dtype_only(call, ctx)))


def _host_copy(model, value, ctx) -> bool:
    """``value`` is visibly a CPU copy: ``X.cpu()``, ``X.to("cpu")``, followed by calls that
    keep the device (``model.cpu().half()``, ``model.cpu().to(torch.float16).eval()``)."""
    while type(value) is ast.Call and _same_device(model, value, ctx):
        value = value.func.value
    if type(value) is not ast.Call:
        return False
    f = value.func
    return type(f) is ast.Attribute and (f.attr == "cpu" or (f.attr == "to" and _to_cpu(model, value, ctx)))


def _cpu_fallback_params(model, func) -> set:
    """The parameters ``p`` of a conversion helper some ``return`` of which moves ``p`` (or
    what it is rooted in) to the CPU (``return obj.detach().cpu()``): its ``return p`` is the
    fallback for values that are no tensor (a recursive ``to_cpu(obj)`` over dicts and lists
    ending in ``return obj``), not device state handed back."""
    key = ("cpu_fallback", id(func))
    found = model._cache.get(key)
    if found is None:
        found = set()
        for value, vctx in func.returns:
            if type(value) is not ast.Call:
                continue
            if model.call_name(value, vctx) == TO_CPU:
                base = value.args[0] if value.args else None
            elif _host_copy(model, value, vctx):
                base = value.func.value
            else:
                continue
            while type(base) in (ast.Call, ast.Attribute, ast.Subscript):
                base = base.func if type(base) is ast.Call else base.value
            if type(base) is ast.Name and base.id in func.params:
                found.add(base.id)
        model._cache[key] = found
    return found


def _short(q: str) -> str:
    return "xser.save" if q == XSER_SAVE else "xm.save"


# ---------------------------------------------------------------------------------- states
def state_dicts(model, expr, ctx, _depth: int = 0, _seen=None) -> list[tuple[ast.Call, object]]:
    """The ``X.state_dict()`` calls whose result ``expr`` holds (directly, through names,
    ``self.`` attributes, dict/list/tuple displays, ``ckpt["model"] = ...`` stores, module
    helpers' returns and the arguments callers pass for a parameter), minus the places it
    is visibly moved to the CPU (``.cpu()``, ``.to("cpu")``, ``xm._maybe_convert_to_cpu``,
    a comprehension over it)."""
    seen = _seen if _seen is not None else set()
    if expr is None or expr is UNKNOWN or ctx is None or _depth > 10 or id(expr) in seen or len(seen) > 256:
        return []
    seen.add(id(expr))
    t = type(expr)
    d = _depth + 1
    out = []
    if t is ast.Call:
        f = expr.func
        q = model.call_name(expr, ctx)
        if type(f) is ast.Attribute and f.attr == "state_dict" and q is None:
            return [(expr, ctx)]
        if q == TO_CPU or (type(f) is ast.Attribute and (f.attr == "cpu" or (f.attr == "to" and _to_cpu(model, expr, ctx)))):
            return []
        builtin = type(f) is ast.Name and f.id in ("dict", "list", "tuple") and model.lookup(f.id, ctx, None) is None
        if q in _PASS_THROUGH or builtin:
            for a in expr.args:
                out += state_dicts(model, a.value if type(a) is ast.Starred else a, ctx, d, seen)
            for kw in expr.keywords:
                out += state_dicts(model, kw.value, ctx, d, seen)
            return out
        if q is None:
            for func in model.function_of(f, ctx):
                fallback = _cpu_fallback_params(model, func)
                for value, vctx in func.returns:
                    if type(value) is ast.Name and value.id in fallback:
                        continue  # to_cpu(obj)'s `return obj` for what is no tensor
                    out += state_dicts(model, value, vctx, d, seen)
        return out
    if t is ast.Dict:
        for v in expr.values:
            out += state_dicts(model, v, ctx, d, seen)
        return out
    if t in (ast.List, ast.Tuple, ast.Set):
        for v in expr.elts:
            out += state_dicts(model, v.value if type(v) is ast.Starred else v, ctx, d, seen)
        return out
    if t is ast.IfExp:
        for branch in model.xla_branches(expr):
            out += state_dicts(model, branch, ctx, d, seen)
        return out
    if t in (ast.Name, ast.Attribute):
        if model.qualname(expr, ctx) is not None:
            return []
        if t is ast.Name:
            bindings = model.lookup(expr.id, ctx, getattr(expr, "lineno", None)) or ()
            for _, kind, target, b_ctx in bindings:
                if kind == "value" and b_ctx is not None:
                    out += state_dicts(model, target, b_ctx, d, seen)
                elif kind == "param" and target is not None and hasattr(target, "params"):
                    for arg, actx in model.param_arguments(target, expr.id) or ():
                        out += state_dicts(model, arg, actx, d, seen)
            stores = _stores_into(model, expr, ctx)
            if any(_converts_entries(model, target, value, vctx) for target, value, vctx in stores):
                return []  # `for k in sd: sd[k] = sd[k].cpu()`: converted entry by entry
            for _, value, vctx in stores:
                out += state_dicts(model, value, vctx, d, seen)
        else:
            for value, vctx in model.values(expr, ctx) or ():
                if value is not None:
                    out += state_dicts(model, value, vctx, d, seen)
        return out
    return out


def _stores_into(model, name, ctx) -> list:
    """``(target, value, ctx)`` of ``ckpt["model"] = value`` before ``name`` is read, in
    the same scope."""
    table = model._cache.get("ckpt_stores")
    if table is None:
        table = model._cache["ckpt_stores"] = {}
        for target, value, sctx in model.subscript_stores:
            base = target.value
            if type(base) is ast.Name:
                table.setdefault((id(sctx.scope), base.id), []).append((target.lineno, target, value, sctx))
    line = getattr(name, "lineno", 0)
    return [(t, v, c) for ln, t, v, c in table.get((id(ctx.scope), name.id), ()) if ln < line]


def _converts_entries(model, target, value, ctx) -> bool:
    """``sd[k] = v.cpu()`` in a loop: a store under a key that is not a literal, of a value
    visibly moved to the CPU (``.cpu()``, ``.to("cpu")``, ``xm._maybe_convert_to_cpu``)."""
    if not ctx.loops or type(target.slice) is ast.Constant or type(value) is not ast.Call:
        return False
    f = value.func
    return model.call_name(value, ctx) == TO_CPU or (type(f) is ast.Attribute and (
        f.attr == "cpu" or (f.attr == "to" and _to_cpu(model, value, ctx))))


def _to_cpu(model, call, ctx) -> bool:
    arg = model.kwarg(call, "device", 0)
    return isinstance(arg, ast.AST) and _cpu_device(model, arg, ctx)


def _cpu_device(model, arg, ctx) -> bool:
    """``"cpu"``, ``"cpu:0"``, ``torch.device("cpu")``, or a name bound to one."""
    if type(arg) is ast.Call and model.call_name(arg, ctx) == "torch.device" and arg.args:
        arg = arg.args[0]
    value = model.const(arg, ctx)
    return isinstance(value, str) and value.split(":")[0] == "cpu"


def _ident(expr) -> str | None:
    while type(expr) is ast.Call:
        expr = expr.args[0] if expr.args and type(expr.func) is ast.Name else expr.func
    if type(expr) is ast.Name:
        return expr.id
    if type(expr) is ast.Attribute:
        return expr.attr
    return None


def device_state(model, call, ctx, _depth: int = 0) -> bool:
    """True when ``X.state_dict()`` holds tensors on the XLA device: ``X`` is a module or
    an optimizer (constructed, or so named; a parameter by what callers pass) that is not
    visibly on the CPU (``X.cpu()`` before, a module built here and never moved)."""
    recv = call.func.value
    return _device_holder(model, recv, ctx, call.lineno, _depth)


def _device_holder(model, recv, ctx, line, depth) -> bool:
    if depth > 4:
        return False
    t = type(recv)
    if t is ast.Call:
        f = recv.func
        if type(f) is ast.Attribute and (f.attr == "cpu" or (f.attr == "to" and _to_cpu(model, recv, ctx))):
            return False
        if type(f) is ast.Attribute and f.attr in _WRAPPED:
            return _device_holder(model, f.value, ctx, line, depth + 1) or not _same_device(model, recv, ctx)
    if _moved_to_cpu(model, recv, ctx, line) or _constructor(model, recv, ctx):
        return False  # moved to the CPU before, or built right here (`Net().state_dict()`)
    own = _own_state_dict(model, recv, ctx)
    if own is not None:  # a class of this module that defines state_dict(): what it returns
        return any(device_state(model, c, x, depth + 1) for v, vc in own for c, x in state_dicts(model, v, vc))
    if t is ast.Call:  # make_model().state_dict(): what the module's helper returns
        funcs = model.function_of(recv.func, ctx)
        if len(funcs) == 1 and funcs[0].returns and all(v is not None and vc is not None for v, vc in funcs[0].returns):
            return any(_device_holder(model, v, vc, v.lineno, depth + 1) for v, vc in funcs[0].returns)
    ident = _ident(recv)
    if ident and _PYTHON_STATE.search(ident) and not _TENSOR_STATE.search(ident.replace("config", "")):
        return False
    values = model.resolve_values(recv, ctx) if t in (ast.Name, ast.Attribute) else None
    if values:
        for v, vctx in values:
            q = model.call_name(v, vctx) if type(v) is ast.Call else None
            if q is not None and (q.startswith(_PYTHON_STATE_CLASSES) or q.endswith(("Scaler", "Sampler", "DataLoader"))):
                return False
            if q in _PASS_THROUGH and len(values) == 1 and v.args:  # copy.deepcopy(model)
                return _device_holder(model, v.args[0], vctx, line, depth + 1)
            if _host_copy(model, v, vctx):
                return False  # self.shadow = copy.deepcopy(model).cpu(), m = model.cpu().half()
            device = model.kwarg(v, "device") if type(v) is ast.Call else None
            if isinstance(device, ast.AST) and _cpu_device(model, device, vctx):
                return False  # ModelEmaV2(model, device="cpu"): a copy kept on the CPU
    if values is None and _self_attr_cpu_binding(model, recv, ctx, line):
        return False  # self.model = self.model.cpu() in another method: mixed, unknown
    if values and any(_handed_to_helper(model, v, vctx) for v, vctx in values):
        return False  # model = offload(model): another module's helper may have moved it anywhere
    if model.is_optimizer(recv, ctx):
        return not _optimizer_of_cpu_module(model, values, line)
    if t in (ast.Name, ast.Attribute) and model.is_model(recv, ctx):
        return not _built_here_unmoved(model, recv, ctx, line)
    if t is ast.Name:
        bindings = model.lookup(recv.id, ctx, getattr(recv, "lineno", None)) or ()
        if bindings and all(k == "param" for _, k, _, _ in bindings) and hasattr(bindings[0][2], "params"):
            args = model.param_arguments(bindings[0][2], recv.id)
            if args:
                return any(_device_holder(model, a, actx, a.lineno, depth + 1) for a, actx in args
                           if type(a) in (ast.Name, ast.Attribute, ast.Call))
            elsewhere = model.project_arguments(bindings[0][2], recv.id)
            if elsewhere and all(a.kind == HOST_COPY for a in elsewhere):
                return False  # every caller in another project module passes a host copy
    return bool(ident) and bool(_TENSOR_STATE.search(ident))


def _handed_to_helper(model, value, ctx) -> bool:
    """``value`` is a call of a project helper of another module handed a plain name
    (``model = offload(model)``) that the project does not know to move it to the XLA device
    (``HelperFacts.moves_param``): where its result lives is unknown."""
    if type(value) is not ast.Call or model.project_lookup is None or not model._imported_helper(value, ctx) \
            or not any(type(a) is ast.Name for a in value.args):
        return False
    helper = model.project_helper(value.func, ctx)
    return helper is not None and helper.moves_param < 0 and not helper.returns_device


def _self_attr_cpu_binding(model, recv, ctx, line) -> bool:
    """``recv`` is ``self.<attr>`` in a method and some binding of the attribute in the
    class hierarchy is visibly a CPU copy (``self.model = self.model.cpu()``,
    ``.to("cpu")``, ``device="cpu"``): where the bindings differ, which one a read sees
    is unknown, and unknown never fires. A CPU copy made later in the same method than
    ``line`` does not count: the first run of the method reads the state before it."""
    func = ctx.func
    if type(recv) is not ast.Attribute or type(recv.value) is not ast.Name or func is None or func.cls is None \
            or not func.params or recv.value.id != func.params[0]:
        return False
    for v, vctx in model.self_attr_bindings(func.cls, recv.attr) or ():
        if type(v) is not ast.Call or (vctx.func is func and v.lineno > line):
            continue
        f = v.func
        if model.call_name(v, vctx) == TO_CPU or (type(f) is ast.Attribute and (
                f.attr == "cpu" or (f.attr == "to" and _to_cpu(model, v, vctx)))):
            return True
        device = model.kwarg(v, "device")
        if isinstance(device, ast.AST) and _cpu_device(model, device, vctx):
            return True
    return False


def _own_state_dict(model, recv, ctx) -> list | None:
    """The values the ``state_dict()`` method returns when every value of ``recv`` is an
    instance of a class of this module that defines one (an EMA or a trainer holding its
    own state); None otherwise."""
    if type(recv) not in (ast.Name, ast.Attribute):
        return None
    values = model.resolve_values(recv, ctx)
    if not values:
        return None
    out = []
    for v, vctx in values:
        cls = model.class_named(v.func.id, vctx) if type(v) is ast.Call and type(v.func) is ast.Name else None
        method = model._method_table(cls).get("state_dict") if cls is not None else None
        if method is None or not method.returns:
            return None
        out.extend(method.returns)
    return out


def _optimizer_of_cpu_module(model, values, line) -> bool:
    """An optimizer built over ``net.parameters()`` of a module on the CPU (built in the same
    function, never moved): its state is CPU tensors."""
    if not values:
        return False
    for v, vctx in values:
        if type(v) is not ast.Call or not v.args:
            return False
        first = v.args[0]
        if not (type(first) is ast.Call and type(first.func) is ast.Attribute and first.func.attr == "parameters"
                and _built_here_unmoved(model, first.func.value, vctx, line)):
            return False
    return True


def _moves(model, func) -> dict:
    """``expr_key(receiver) -> [((line, col), to_cpu), ...]`` for the ``X.cpu()`` /
    ``X.to(...)`` / ``X.cuda()`` calls of ``func`` (the module when None), sorted; indexed
    once per function (``model.eval().cpu()`` counts as a move of ``model``)."""
    key = ("ckpt_moves", id(func))
    table = model._cache.get(key)
    if table is None:
        table = model._cache[key] = {}
        for call, cctx in (func.calls if func is not None else model.calls):
            f = call.func
            if type(f) is not ast.Attribute or f.attr not in ("cpu", "to", "cuda", "to_empty"):
                continue
            base = f.value
            while type(base) is ast.Call and type(base.func) is ast.Attribute and base.func.attr in _WRAPPED - {"to"}:
                base = base.func.value
            if type(base) in (ast.Name, ast.Attribute):
                cpu = f.attr == "cpu" or (f.attr == "to" and _to_cpu(model, call, cctx))
                table.setdefault(expr_key(base), []).append(((call.lineno, call.col_offset), cpu))
        for moves in table.values():
            moves.sort()
    return table


def _last_move(model, recv, ctx, line):
    """The latest move of ``recv`` before ``line`` in its function: True to the CPU, False
    elsewhere, None when none."""
    moves = _moves(model, ctx.func).get(expr_key(recv)) if type(recv) in (ast.Name, ast.Attribute) else None
    if not moves:
        return None
    i = bisect.bisect_left(moves, ((line, 0), False))
    return moves[i - 1][1] if i else None


def _moved_to_cpu(model, recv, ctx, line) -> bool:
    """The latest move of ``recv`` before ``line`` in the same function is to the CPU:
    ``model.cpu()``, ``model.eval().cpu()``, ``model.to("cpu")`` (not followed by a
    ``model.to(device)``)."""
    return _last_move(model, recv, ctx, line) is True


def _constructor(model, value, ctx) -> bool:
    """``Net(...)`` / ``nn.Linear(...)`` / ``torchvision.models.resnet50()``: a module built on the CPU."""
    if type(value) is not ast.Call:
        return False
    q = model.call_name(value, ctx)
    if q is not None:
        return q.startswith(("torch.nn.", "torchvision.models.")) and not q.startswith(
            ("torch.nn.parallel.", "torch.nn.functional.", "torch.nn.utils."))
    f = value.func
    if type(f) is ast.Name:
        cls = model.class_named(f.id, ctx)
        return cls is not None and model.is_module_class(cls)
    return False


def _built_here_unmoved(model, recv, ctx, line) -> bool:
    """A module constructed in this function (``net = Net()``, ``nn.Linear(2, 2)``) with no
    ``.to(...)`` / ``.cuda()`` / wrap on the way and no ``net.to(...)`` before ``line``: on
    the CPU."""
    if type(recv) is not ast.Name or ctx.func is None:
        return False
    bindings = model.lookup(recv.id, ctx, getattr(recv, "lineno", None)) or ()
    if not bindings or any(k != "value" or b_ctx is None or b_ctx.func is not ctx.func for _, k, _, b_ctx in bindings):
        return False
    if not all(_constructor(model, value, b_ctx) for _, _, value, b_ctx in bindings):
        return False  # net.to(dev), a wrapper, a helper's result
    return _last_move(model, recv, ctx, line) is not False


def _fsdp_holder(model, recv, ctx, depth: int = 0) -> bool:
    """``recv`` (or the ``.module`` of it) holds an XLA FSDP wrap: ``XlaFullyShardedDataParallel(...)``
    through names, ``self.`` attributes, lambdas and helpers that return one, and what
    callers pass for a parameter."""
    if depth > 6 or recv is None:
        return False
    t = type(recv)
    if t is ast.Call:
        q = model.call_name(recv, ctx)
        if q == XLA_FSDP:
            return True
        f = recv.func
        if type(f) is ast.Attribute and f.attr in _WRAPPED:
            return _fsdp_holder(model, f.value, ctx, depth + 1)
        if q is None and type(f) is ast.Name:
            wrapper = model.wrapper_name(recv, ctx)  # fsdp_wrap = lambda m: FSDP(m), partial(FSDP, ...)
            if wrapper is not None:
                return wrapper == XLA_FSDP
            for v, vctx in model.values(f, ctx) or ():
                if type(v) is ast.Lambda:
                    return False
            return any(_fsdp_holder(model, v, vctx, depth + 1)
                       for func in model.function_of(f, ctx) for v, vctx in func.returns)
        return False
    if t is ast.Attribute and recv.attr == "module" and model.values(recv, ctx) is None:
        return _fsdp_holder(model, recv.value, ctx, depth + 1)
    if t not in (ast.Name, ast.Attribute) or model.qualname(recv, ctx) is not None:
        return False
    if t is ast.Name:
        bindings = model.lookup(recv.id, ctx, getattr(recv, "lineno", None)) or ()
        if bindings and all(k == "param" for _, k, _, _ in bindings) and hasattr(bindings[0][2], "params"):
            return any(_fsdp_holder(model, a, actx, depth + 1) for a, actx in model.param_arguments(bindings[0][2], recv.id) or ())
    return any(v is not None and _fsdp_holder(model, v, vctx, depth + 1) for v, vctx in model.values(recv, ctx) or ())


#: what puts a model on the XLA device: device calls, launchers, device loaders, XLA FSDP
_ON_DEVICE = (*XLA_DEVICE_CALLS, "torch_xla.distributed.parallel_loader.MpDeviceLoader",
              "torch_xla.distributed.parallel_loader.ParallelLoader", XLA_FSDP)


def _places_on_device(model) -> bool:
    """The module visibly puts work on the XLA device: ``torch_xla.device()`` /
    ``xm.xla_device()``, a launcher, a device loader or an XLA FSDP wrap (with
    ``--xla-scope=always`` every module counts: it is being ported), or launched XLA code of
    another project module runs its functions (project mode)."""
    return model.settings.scope == "always" or bool(model.calls_to(*_ON_DEVICE)) or bool(model.launches()) \
        or model.in_project()


def _passed_state(model, obj, ctx) -> bool:
    """Project mode: ``obj`` is a parameter of its function (a method too) for which some
    caller in another project module passes a state holding the ``state_dict()`` of a
    module on the XLA device (argument kind ``state_dict``: ``backend.save(state, path)`` in
    the launched ``_worker`` reaching the inherited ``Backend.save``, where ``model =
    backend.prepare_model(model)`` moved it: ``HelperFacts.moves_param`` of the method on
    the receiver's class)."""
    if type(obj) is not ast.Name or model.project_callers is None:
        return False
    bindings = model.lookup(obj.id, ctx, getattr(obj, "lineno", None)) or ()
    if len(bindings) != 1 or bindings[0][1] != "param" or bindings[0][2] is not ctx.func:
        return False
    for arg in model.project_arguments_seen(ctx.func, obj.id):
        if arg.kind != "state_dict":
            continue
        if arg.name == "device":
            return True
        for file, qual in arg.refs:  # backend.prepare_model(model): does that class's method move it?
            cls, _, method = qual.partition(".")
            try:
                helper = model.project_lookup((method,), cls=(file, cls)) if model.project_lookup else None
            except (Exception, RecursionError):
                helper = None
            if helper is not None and helper.moves_param >= 0:
                return True
    return False


def _single_process(model) -> bool:
    launches = model.launches()
    return bool(launches) and all(one for _, _, _, one in launches)


# ---------------------------------------------------------------------------------- rules
@rule
class TorchSaveXlaState(Rule):
    """## What it does
    Flags `torch.save(obj, path)` in XLA code when `obj` holds a module's or an
    optimizer's `state_dict()` that is not visibly moved to the CPU: the `state_dict()`
    call itself, a name bound to it, a dict / list / tuple holding it (`{"model":
    model.state_dict(), "epoch": epoch}`), a `ckpt["model"] = ...` store, what a module
    helper returns, or what callers pass for a helper's parameter (in project mode also a
    caller in another module's launched code: `backend.save(state, path)` reaching the
    inherited `Backend.save`, `state` holding `model.state_dict()` of the model that
    `backend.prepare_model(model)` moved to the XLA device). Reported at the `torch.save`
    call.

    ## Why is this bad?
    The state of a model on the XLA device is XLA tensors. `torch.save` pickles them as
    device tensors: they load back onto the XLA device (or fail where there is none), and
    every replica writes the same file at once. `xm.save` moves the data to the CPU and
    writes it on the master only.

    ## Known problems
    Not reported for CPU copies (`{k: v.cpu() for k, v in sd.items()}`, `model.cpu()` or
    `model.to("cpu")` first, also cast after (`model.cpu().half()`),
    `xm._maybe_convert_to_cpu(...)`, `sd[k] = sd[k].cpu()` in a loop over the dict, a module
    helper `to_cpu(obj)` that moves tensors and returns anything else as it came), what the `state_dict()` of a class of the module returns when it
    is on the CPU (an EMA copy made with `.cpu()`), a `self.` attribute some method rebinds
    to a CPU copy (`self.model = self.model.cpu()`: which binding a read sees is unknown;
    a copy made after the save in its own method does not count, order matters: the first
    save holds XLA tensors), Python data (a metrics
    list), the state of schedulers, scalers, samplers and loaders (Python values), a module
    built in the same function and never moved, or in an XLA-off (CUDA) branch. Only in a
    module that visibly puts work on the XLA device (`torch_xla.device()`,
    `xm.xla_device()`, a launcher, a device loader, an XLA FSDP wrap; any module with
    `--xla-scope=always`): a script that only imports torch_xla may keep its model on the
    CPU. A receiver that cannot be seen counts by its name (`model`, `net`, `optimizer`, ...).

    ## Example
    ```python
    torch.save({"model": model.state_dict(), "opt": optimizer.state_dict()}, "ckpt.pt")
    ```

    ## Use instead
    ```python
    xm.save({"model": model.state_dict(), "opt": optimizer.state_dict()}, "ckpt.pt")
    # or an explicit CPU copy on one writer:
    cpu_state = {k: v.cpu() for k, v in model.state_dict().items()}
    if xr.global_ordinal() == 0:
        torch.save(cpu_state, "ckpt.pt")
    ```

    ## References
    - torch_xla `docs/source/learn/pytorch-on-xla-devices.md` "Saving and Loading XLA
      Tensors" ("XLA tensors should be moved to the CPU before saving"; "XLA tensors are
      always loaded back to the device they were saved from"); `API_GUIDE.md` (same)
    - torch_xla `docs/source/learn/troubleshoot.md` "XLA Tensor Quirks"
    - torch_xla `torch_xla/core/xla_model.py` `save` (`_maybe_convert_to_cpu`, then
      `torch.save` where `should_write_data`)
    - Applies to torch_xla 2.0-2.9.
    """

    code = "XLA601"
    reported_at = 'the `torch.save(...)` call'
    name = "torch-save-xla-state"
    message = "torch.save of a state_dict() keeps XLA tensors"
    fix = "use xm.save(obj, path)"
    severity = "E"
    versions = "2.0+"
    bad = [
        "import torch\nimport torch_xla\n"
        "def save(model, optimizer):\n"
        "    torch.save({'model': model.state_dict(), 'opt': optimizer.state_dict()}, 'ckpt.pt')\n"
        "def train(model, optimizer):\n"
        "    model.to(torch_xla.device())\n"
        "    save(model, optimizer)\n",
    ]
    good = [
        "import torch\nimport torch_xla.core.xla_model as xm\n"
        "def save(model, scheduler, history):\n"
        "    xm.save(model.state_dict(), 'ckpt.pt')\n"
        "    torch.save({k: v.cpu() for k, v in model.state_dict().items()}, 'cpu.pt')\n"
        "    torch.save(scheduler.state_dict(), 'sched.pt')\n"
        "    torch.save(history, 'history.pt')\n",
    ]

    def check(self, model):
        saves = model.calls_to(TORCH_SAVE)
        if not saves or not _places_on_device(model):
            return  # a module that never puts anything on the XLA device: its state may be CPU
        for call, ctx in saves:
            obj = model.kwarg(call, "obj", 0)
            if not isinstance(obj, ast.AST) or not model.in_xla_code(ctx):
                continue
            held = [(s, sctx) for s, sctx in state_dicts(model, obj, ctx) if device_state(model, s, sctx)]
            if not held and _passed_state(model, obj, ctx):
                held = [(obj, ctx)]  # a parameter: a caller in launched code passes {"model": model.state_dict()}
            if not held:
                continue
            what = source_text(held[0][0], 32)
            if model.replica_guard(ctx) is not None:
                yield self.finding(call, f"torch.save of {what} keeps XLA tensors",
                                   "use xm.save(obj, path) on every replica")
            else:
                yield self.finding(call, f"torch.save of {what} keeps XLA tensors")


@rule
class XmSaveUnderRankGuard(Rule):
    """## What it does
    Flags `xm.save(...)` (and `xser.save`, `torch_xla.utils.serialization.save`) in XLA
    code that only some replicas reach: under a rank test (`xm.is_master_ordinal()`,
    `xr.global_ordinal() == 0`, `dist.get_rank() == 0`, the launch index, `RANK` from
    the environment, ...), after `if not master: return`, or under a condition on the
    replica's own data (`if acc > best:` with `acc` from this replica's shard). When the
    save sits in a module helper, the guarded call of that helper is reported.

    ## Why is this bad?
    Up to torch_xla 2.0 `xm.save` ended with `xm.rendezvous(...)`: every replica had to
    call it, and one behind a rank test hangs the run. From 2.1 there is no rendezvous and
    `xm.save` already writes on the master only (`master_only=True`), so the test is
    redundant; the other replicas also skip moving the state to the CPU, which is where
    pending work (a collective) may still have to run. A condition on a replica's own
    metric lets only the master's value decide.

    ## Known problems
    The severity and message follow `--xla-version`: E (hang) up to 2.0, C (redundant)
    from 2.1. From 2.1 a rank test is reported where it tests a master: a local-master
    test (`xm.is_master_ordinal()`, `xr.local_ordinal() == 0`) is redundant; a
    global-master test (`local=False`, `xr.global_ordinal() == 0`, `dist.get_rank() == 0`,
    the launch index, `trainer.is_world_process_zero()`) is redundant around
    `xm.save(..., global_master=True)` and, around the default, is the spelling of
    `global_master=True` done by hand (the message says so). A save with
    `master_only=False` under a rank test is a chosen writer, and other rank tests
    (`rank % 8 == 0`) pick other writers: neither is reported from 2.1. A project
    helper that saves (an imported `save_checkpoint`, or `trainer.save_model(path)` on
    the trainer a callback receives, in project mode) is taken with `xm.save`'s defaults.
    Not reported in a single-process launch, for an unconditional save,
    or under conditions every replica shares (the world size, a config flag, `epoch % N`,
    a metric reduced with `xm.mesh_reduce` / `all_reduce`).

    ## Example
    ```python
    if xm.is_master_ordinal():
        xm.save(model.state_dict(), path)
    ```

    ## Use instead
    ```python
    xm.save(model.state_dict(), path)  # every replica calls it; the master writes
    ```

    ## References
    - torch_xla `torch_xla/core/xla_model.py` `save`: ends with
      `rendezvous('torch_xla.core.xla_model.save')` in v2.0.0, removed in v2.1 (#4926
      "Remove rendezvous from xm.save"); the same for `torch_xla/utils/serialization.py`
    - pytorch/xla#2712 ("`xm.save` has a rendezvous in it. All cores must sync in this
      rendezvous, otherwise the processes will hang")
    - Applies to torch_xla 2.0-2.9 (hang up to 2.0, redundant from 2.1).
    """

    code = "XLA602"
    reported_at = 'the `xm.save(...)` call, or, when the save is in a module helper, the guarded call of that helper'
    name = "xm-save-under-rank-guard"
    message = "xm.save under a rank test is redundant: it writes on the master only"
    fix = "call it on every replica"
    severity = "E"
    severity_since = (("2.1", "C"),)
    versions = "2.0+ (hang up to 2.0, redundant from 2.1)"
    bad = [
        "# options: --xla-version=2.0\nimport torch_xla.core.xla_model as xm\n"
        "def save(model, path):\n"
        "    if xm.is_master_ordinal():\n"
        "        xm.save(model.state_dict(), path)\n",
        "import torch_xla.core.xla_model as xm\n"
        "import torch_xla.runtime as xr\n"
        "def save(model, path):\n"
        "    if xr.global_ordinal() == 0:\n"
        "        xm.save(model.state_dict(), path, global_master=True)\n",
        "import torch_xla.core.xla_model as xm\n"
        "import torch_xla.runtime as xr\n"
        "def save(model, path):\n"
        "    if xr.global_ordinal() == 0:\n"
        "        xm.save(model.state_dict(), path)\n",
    ]
    good = [
        "import torch_xla.core.xla_model as xm\n"
        "import torch_xla.runtime as xr\n"
        "def save(model, path, epoch):\n"
        "    if epoch % 5 == 0:\n"
        "        xm.save(model.state_dict(), path)\n"
        "    if xr.global_ordinal() % 8 == 0:\n"
        "        xm.save(model.state_dict(), path, master_only=False)  # a chosen writer per host\n",
    ]

    def check(self, model):
        saves = [(call, ctx, None) for call, ctx in model.calls_to(*SAVES)] + _helper_saves(model)
        if not saves or _single_process(model):
            return
        hangs = not at_least(self.settings, api_table.behaviour_since(XM_SAVE, self.code))
        reported = set()
        for call, ctx, helper_writer in saves:
            if not model.in_xla_code(ctx):
                continue
            if helper_writer is None:
                name = _short(model.call_name(call, ctx))
                master_only = model.kwarg(call, "master_only", 2)
                chosen_writer = master_only is UNKNOWN or (
                    master_only is not None and model.const(master_only, ctx) is not True)
                global_master = model.kwarg(call, "global_master", 3)
                one_writer = isinstance(global_master, ast.AST) and model.const(global_master, ctx) is True
            else:  # a project helper that saves: how its own xm.save calls pick their writers
                name, chosen_writer, one_writer = f"{source_text(call.func, 24)}() (xm.save)", False, helper_writer
            if chosen_writer and not hangs:
                continue  # master_only=False under a rank test: the writer is picked on purpose
            for site, sctx, test, polarity, kind in model.replica_guarded_sites(call, ctx):
                if id(site) in reported or not model.in_xla_code(sctx):
                    continue
                scope = None
                if not hangs and kind == "rank":
                    scope = model.master_scope(test, sctx, polarity)
                    if scope is None:
                        continue  # `rank % 8 == 0`: other writers than xm.save picks
                reported.add(id(site))
                who = name if site is call else f"{source_text(site.func, 24)}() ({name})"
                if hangs:
                    where = "a rank test" if kind == "rank" else "a test of this replica's data"
                    yield self.finding(site, f"{who} under {where} hangs: its rendezvous is never met",
                                       "call it on every replica")
                elif kind == "rank" and scope == "global" and not one_writer:
                    yield self.finding(site, f"{who} under a global-master test is global_master=True by hand",
                                       "call it on every replica with global_master=True")
                elif kind == "rank":
                    yield self.finding(site, f"{who} under a rank test is redundant: it writes on the master only",
                                       "call it on every replica")
                else:
                    yield self.finding(site, f"{who} under a test of this replica's data: only the master's counts",
                                       "reduce it first (xm.mesh_reduce)")


def _helper_saves(model) -> list:
    """Project mode: calls of this module that run ``xm.save`` in a function of another
    project module: an imported helper (``save_checkpoint(model, path)``) or a method of an
    object a parameter brought in whose callers name its class (``trainer.save_model(path)``
    in a callback): ``(call, ctx, one_writer)``, ``one_writer`` when every save there passes
    ``global_master=True``. A helper whose saves pick their writers (``master_only=False``,
    an argument that cannot be seen) is left out. Reported at the call when it is guarded."""
    if model.project_lookup is None:
        return []
    stored = model.stored_calls("saves", extra=1)  # (a warm run of an unchanged project: as stored)
    if stored is not None:
        return stored
    out = []
    picked = []
    for i, (call, ctx) in enumerate(model.calls):
        f = call.func
        if type(f) not in (ast.Name, ast.Attribute) or not model.may_be_replica_guarded(ctx):
            continue  # (no branch around the call, no caller in the module: no guard to report at)
        chain = model._import_chain(f, ctx)
        if chain is not None:  # an imported function (cached per name; most are no project's)
            q = model.call_name(call, ctx)
            if q is not None and q.startswith("torch"):
                continue
            helper = model.project_helper(f, ctx)
            if helper is None or not _saving(helper):
                continue  # (asked first: the guard walk below is dearer than a cached lookup)
            helpers = (helper,)
        elif type(f) is ast.Attribute and type(f.value) in (ast.Name, ast.Attribute) and ctx.func is not None:
            # (the guard is asked below, once a saving helper is found: asked first, its walk
            # of every function's replica tests cost more than the receiver's values)
            # saver = CheckpointSaver(...); saver.save(...), trainer.save_model(path) in a
            # callback, self.strategy.save_checkpoint(...) with the strategy the callers pass
            helpers = model.callee_helpers(call, ctx)
            if not helpers or not all(_saving(h) for h in helpers):
                continue
        else:
            continue
        if not model.in_xla_code(ctx) or not model.replica_guarded_sites(call, ctx):
            continue  # reported only where a replica test guards it (check's loop): nothing to ask
        out.append((call, ctx, all(h.saves == {"global"} for h in helpers)))
        picked.append((i, out[-1][2]))
    model.store_answer("saves", tuple(picked))
    return out


def _stored_masters(model) -> set | None:
    """XLA604's stored answer (project mode): ``{(id(test), polarity)}`` of the branches
    around the module's calls that hold only on a local master, the tests named by their
    index in :attr:`~flake8_xla.model.Model.tests`; ``None`` when there is none that fits."""
    answers = model.project_answers
    got = answers.get("masters") if answers is not None else None
    if type(got) not in (list, tuple):
        return None
    tests = model.tests
    out = set()
    for item in got:
        if type(item) not in (list, tuple) or len(item) != 2 or type(item[0]) is not int \
                or type(item[1]) is not bool or not 0 <= item[0] < len(tests):
            return None
        out.add((id(tests[item[0]]), item[1]))
    return out


def _store_masters(model, found: list) -> None:
    """Keep XLA604's answer (:func:`_stored_masters`), when every test is one of the walk's."""
    if model.project_answers is None:
        return
    index = {id(t): i for i, t in enumerate(model.tests)}
    if all(id(test) in index for test, _ in found):
        model.store_answer("masters", tuple(sorted({(index[id(test)], polarity) for test, polarity in found})))


def _saving(helper) -> bool:
    """The project helper runs ``xm.save`` with writers it does not pick itself (no
    ``master_only=False``, no argument that cannot be seen)."""
    return any(q in SAVES for q in helper.xla_calls) and bool(helper.saves) and "chosen" not in helper.saves


@rule
class FsdpCheckpointMasterOnly(Rule):
    """## What it does
    Flags `xm.save(...)` (and `xser.save`) of a state that holds the `state_dict()` of an
    XLA FSDP model (`XlaFullyShardedDataParallel`, through names, a dict, `.module`,
    helpers such as `fsdp_wrap = lambda m: FSDP(m, ...)`, or what callers pass) with
    `master_only=True` (the default).

    ## Why is this bad?
    Under XLA FSDP each replica holds only its own shard of the parameters (and of the
    optimizer state): the master's file holds one shard of the model, the rest is lost.

    ## Known problems
    `master_only=False` (or a value that cannot be seen) is not reported, unless the save
    is reached only under a master test (`if xm.is_master_ordinal(local=False):`,
    `if rank == 0:`): one replica still writes its one shard. The per-rank path is left
    to the user. FSDPv2 (SPMD) checkpoints belong to
    `torch.distributed.checkpoint` and are not checked here. A master-only save of an FSDP
    model under a rank test is reported here only (XLA602's fix would not save the other
    shards).

    ## Example
    ```python
    model = FSDP(model)
    xm.save(model.state_dict(), "ckpt.pth")
    ```

    ## Use instead
    ```python
    ckpt = {"model": model.state_dict(), "shard_metadata": model.get_shard_metadata()}
    path = f"ckpt_rank-{xr.global_ordinal():08d}-of-{xr.world_size():08d}.pth"
    xm.save(ckpt, path, master_only=False)
    # consolidate: python -m torch_xla.distributed.fsdp.consolidate_sharded_ckpts
    ```

    ## References
    - torch_xla `docs/source/perf/fsdp_collectives.md` ("each training process needs to
      save its own checkpoint of the (sharded) model and optimizer state dicts (use
      `master_only=False` and set different paths for each rank in `xm.save`)")
    - torch_xla `test/test_train_mp_mnist_fsdp_with_ckpt.py`,
      `torch_xla/distributed/fsdp/consolidate_sharded_ckpts.py`
    - Applies to torch_xla 2.0-2.9.
    """

    code = "XLA603"
    reported_at = 'the `xm.save(...)` call'
    name = "fsdp-checkpoint-master-only"
    message = "xm.save of XLA FSDP state on the master saves one shard"
    fix = "pass master_only=False, a per-rank path"
    severity = "E"
    versions = "2.0+"
    supersedes = ("XLA602",)
    bad = [
        "import torch_xla.core.xla_model as xm\n"
        "from torch_xla.distributed.fsdp import XlaFullyShardedDataParallel as FSDP\n"
        "def save(module, path):\n"
        "    model = FSDP(module)\n"
        "    xm.save({'model': model.state_dict()}, path)\n",
    ]
    good = [
        "import torch_xla.core.xla_model as xm\n"
        "import torch_xla.runtime as xr\n"
        "from torch_xla.distributed.fsdp import XlaFullyShardedDataParallel as FSDP\n"
        "def save(module):\n"
        "    model = FSDP(module)\n"
        "    ckpt = {'model': model.state_dict(), 'shard_metadata': model.get_shard_metadata()}\n"
        "    xm.save(ckpt, f'ckpt_rank-{xr.global_ordinal()}.pth', master_only=False)\n",
    ]

    def check(self, model):
        for call, ctx in model.calls_to(*SAVES):
            master_only = model.kwarg(call, "master_only", 2)
            if master_only is UNKNOWN:
                continue
            every = master_only is not None and model.const(master_only, ctx) is False
            if master_only is not None and not every and model.const(master_only, ctx) is not True:
                continue
            data = model.kwarg(call, "data", 0)
            if not isinstance(data, ast.AST) or not model.in_xla_code(ctx):
                continue
            site = self._master_guard(model, call, ctx) if every else call
            if site is None:
                continue  # master_only=False on every replica: the documented sharded save
            if any(_fsdp_holder(model, s.func.value, sctx) for s, sctx in state_dicts(model, data, ctx)):
                name = _short(model.call_name(call, ctx))
                if every:
                    yield self.finding(site, f"{name} of XLA FSDP state under a rank test saves one shard",
                                       "call it on every replica, per-rank path")
                else:
                    yield self.finding(call, f"{name} of XLA FSDP state on the master saves one shard")

    @staticmethod
    def _master_guard(model, call, ctx):
        """The site (the call, or a helper's guarded call) reached only under a test that
        picks one writer (a local or the global master), for ``master_only=False``."""
        for site, sctx, test, polarity, kind in model.replica_guarded_sites(call, ctx):
            if kind == "rank" and model.master_scope(test, sctx, polarity) is not None:
                return site
        return None


# -- XLA604 ------------------------------------------------------------------------------
@rule
class LocalMasterForGlobalAction(Rule):
    """## What it does
    Flags an `if` (or `while`, or conditional expression) that tests
    `xm.is_master_ordinal()` with the default `local=True` (or `local=True`) and guards
    an action meant once per run on something every host shares: an experiment tracker
    (`wandb`, `mlflow`, `comet_ml`, `neptune`, `clearml`), an upload (Hugging Face Hub,
    Cloud Storage, S3, `gsutil cp`), a write to a `gs://` / `s3://` path; in the branch,
    after `if not xm.is_master_ordinal(): return`, or in a module helper called there.
    Also flags `xm.is_master_ordinal` used in a test without being called (the function
    object: the test is the same on every process). Reported at the `if`.

    ## Why is this bad?
    `is_master_ordinal()` checks the *local* ordinal by default: on a multi-host pod every
    host has a local master, so the action runs once per host (N wandb runs, N uploads
    racing on one object). `local=False` checks the one global master. An uncalled
    `xm.is_master_ordinal` is always true (`== True` is always false).

    ## Known problems
    A test that also picks the first host or the global rank 0 (`xm.is_master_ordinal()
    and xr.process_index() == 0`) is the global master: not reported. The test is followed
    through names, `self.` attributes and a module helper returning it
    (`def is_main_process(): return xm.is_master_ordinal()`). In project mode the test may
    be another module's method (`acc.is_main_process()`) and the shared action another
    module's helper whose own code does it (`upload(path, dest)` running `gsutil cp`).
    Per-host work under the local master is right and not reported: creating local
    folders, downloading a dataset, printing, a TensorBoard writer for a local log dir,
    `xm.save` (XLA602 speaks about it; its `global_master=True` picks one writer). A
    single-host run is fine either way: the rule cannot know the topology.

    ## Example
    ```python
    if xm.is_master_ordinal():
        wandb.init(project="run")
    ```

    ## Use instead
    ```python
    if xm.is_master_ordinal(local=False):  # or xr.global_ordinal() == 0
        wandb.init(project="run")
    ```

    ## References
    - torch_xla `torch_xla/core/xla_model.py` `is_master_ordinal(local=True)` ("In case
      of multi-host replication, there is only one global master ordinal (host 0, device
      0), while there are NUM_HOSTS local master ordinals"); `master_print(...,
      local=False)`; `save(..., global_master=False)`
    - facebookresearch/mmf PR #954 ("we need to set `global_master=True` in xm.save")
    - Applies to torch_xla 2.0-2.9.
    """

    code = "XLA604"
    reported_at = 'the `if` that tests the master (its first line)'
    name = "local-master-for-global-action"
    message = "a shared action under xm.is_master_ordinal() runs once per host"
    fix = "use xm.is_master_ordinal(local=False)"
    severity = "E"
    versions = "2.0+"
    bad = [
        "import wandb\nimport torch_xla.core.xla_model as xm\n"
        "def setup(config):\n"
        "    if xm.is_master_ordinal():\n"
        "        wandb.init(project='run', config=config)\n",
        "import torch_xla.core.xla_model as xm\n"
        "def log(x):\n"
        "    if xm.is_master_ordinal == True:\n"
        "        print(x)\n",
    ]
    good = [
        "import os\nimport wandb\nimport torch_xla.core.xla_model as xm\n"
        "def setup(config, out_dir):\n"
        "    if xm.is_master_ordinal(local=False):\n"
        "        wandb.init(project='run', config=config)\n"
        "    if xm.is_master_ordinal():\n"
        "        os.makedirs(out_dir, exist_ok=True)\n",
    ]

    def check(self, model):
        # is_main_process() of another module: in project mode, in code it reaches or a torch_xla script
        helpers = model.project_lookup is not None and (model.in_project() or model.uses_torch_xla)
        if not model.references(MASTER_TEST) and not helpers:
            return
        yield from self._uncalled(model)
        masters = model.calls_to(MASTER_TEST)
        if not masters and not helpers:
            return
        effects = None  # (built at the first call under a master test: most modules have none)
        reported = set()
        masters = _stored_masters(model)  # (a warm run of an unchanged project: the master tests as stored)
        found_masters: list | None = [] if masters is None else None
        for call, ctx in model.calls:
            found = self._master_frame(model, ctx, masters, found_masters)  # first: memoised per branch
            if found is None:
                continue
            what = shared_effect(model, call, ctx)
            if what is None:
                if effects is None:
                    effects = self._effect_functions(model)
                funcs = model.function_of(call.func, ctx) if effects else ()
                if not any(effects.get(id(f)) for f in funcs) and not (
                        model.project_lookup is not None
                        and model.callee_agree(call, ctx, "shared_effect")):  # another module's upload
                    continue
                what = f"{source_text(call.func, 24)}()"
            if not model.in_xla_code(ctx):
                continue
            test = found
            stmt = model.test_statement(test)
            if stmt is None or id(stmt) in reported:
                continue
            reported.add(id(stmt))
            yield self.finding(stmt, f"{what} under xm.is_master_ordinal() runs once per host")
        if found_masters is not None:
            _store_masters(model, found_masters)

    @staticmethod
    def _effect_functions(model) -> dict:
        """id(function) -> True for module functions that act on a shared service (or call one that does)."""
        direct = {id(f): any(shared_effect(model, c, x) for c, x in f.calls) for f in model.functions}
        if not any(direct.values()):
            return {}
        return model.closure_over_callers("xla604_effects", direct)

    @staticmethod
    def _master_frame(model, ctx, masters=None, found=None):
        """The test of the innermost branch around ``ctx`` that holds only on a local master
        (memoised per link of the frame chain: linear over all calls). ``masters``: the
        stored ``(id(test), polarity)`` of every such branch of the module; else ``found``
        collects them."""
        memo = model._cache.setdefault("xla604_links", {})
        link = ctx.frames or None
        todo = []
        while link is not None and id(link) not in memo:
            todo.append(link)
            link = link.parent
        result = memo[id(link)] if link is not None else None
        for node in reversed(todo):  # outermost first
            frame = node.frame
            if type(frame) is tuple and len(frame) == 2 and not isinstance(frame[0], ast.pattern):
                if masters is not None:
                    if (id(frame[0]), bool(frame[1])) in masters:
                        result = frame[0]
                elif model.local_master_test(frame[0], ctx, frame[1]) is not None:
                    result = frame[0]
                    if found is not None:
                        found.append((frame[0], bool(frame[1])))
            memo[id(node)] = result
        return memo[id(ctx.frames)] if ctx.frames else None

    def _uncalled(self, model):
        funcs = {id(c.func) for c, _ in model.calls_to(MASTER_TEST)}
        refs = [(n, c) for n, q, c in model.references(MASTER_TEST)
                if q == MASTER_TEST and type(n) is ast.Attribute and id(n) not in funcs]
        if not refs:
            return
        wanted = {id(n) for n, _ in refs}
        for test in model.tests:
            todo = [test]
            while todo:
                node = todo.pop()
                if id(node) in wanted:
                    stmt = model.test_statement(test)
                    if stmt is not None:
                        yield self.finding(stmt, "xm.is_master_ordinal without (): the same on every process",
                                           "call it: xm.is_master_ordinal()")
                    break
                t = type(node)
                if t is ast.BoolOp:
                    todo.extend(node.values)
                elif t is ast.UnaryOp and type(node.op) is ast.Not:
                    todo.append(node.operand)
                elif t is ast.Compare:
                    todo.extend([node.left, *node.comparators])


#: torch.distributed.checkpoint's savers: they read each tensor of the state on its own
DIST_CP_SAVES = (
    "torch.distributed.checkpoint.save", "torch.distributed.checkpoint.async_save",
    "torch.distributed.checkpoint.save_state_dict", "torch.distributed.checkpoint.state_dict_saver.save",
    "torch.distributed.checkpoint.state_dict_saver.async_save",
    "torch.distributed.checkpoint.state_dict_saver.save_state_dict")
OPTIMIZER_STEP = "torch_xla.core.xla_model.optimizer_step"


@rule
class CheckpointBeforeStepSync(Rule):
    """## What it does
    Flags `torch.distributed.checkpoint.save` (also `async_save`, the deprecated
    `save_state_dict`) of a module's or optimizer's `state_dict()` on the XLA device, in the
    training step after the optimizer step and before the step's graph cut
    (`torch_xla.sync()`, `xm.mark_step()`, `xm.optimizer_step(..., barrier=True)`, the end of
    `with torch_xla.step():`): in the loop body, or in a helper the step calls after its
    optimizer step. Reported at the save call.

    ## Why is this bad?
    After `optimizer.step()` the new weights are a pending graph, not data. The
    checkpoint writer reads the state one tensor at a time, and each read of a pending
    tensor compiles and runs its own graph: the whole step again, once per tensor, every
    time a checkpoint is written; then the step's own sync runs it once more.
    `CheckpointManager` does `torch_xla.sync()` then `xm.wait_device_ops()` before it
    writes (its `_wait_for_data`; its `_save` says the caller must make the data
    available first). A `torch_xla.sync()` before the save makes the state data: the
    writer then only copies. `xm.wait_device_ops()` alone is no fix: it waits for graphs
    already running and cuts nothing.

    ## Known problems
    Silent for `CheckpointManager.save` / `save_async` (torch_xla 2.2-2.9 sync before
    writing), for `xm.save` and `torch.save` (one fused read of every tensor: XLA601's
    concern is what they write), for a save after the iteration's sync or before the
    optimizer step, for a state the model cannot place on the device (CPU copies,
    schedulers; as XLA601), under eager mode, and outside step loops (a save after
    training). A sync hidden in a helper the model cannot see counts as none. An
    `xm.wait_device_ops()` between them counts as a cut, as the step walk takes it for every
    rule, though it is none (it waits for running graphs: measured, the same 9 compiles as
    without it): that shape is missed.

    ## Example
    ```python
    for step, (x, y) in enumerate(loader):
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        if step % 1000 == 0:
            dist_cp.save({"model": model.state_dict()}, checkpoint_id=f"ckpt/{step}")
        torch_xla.sync()
    ```

    ## Use instead
    ```python
    for step, (x, y) in enumerate(loader):
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        torch_xla.sync()
        if step % 1000 == 0:
            dist_cp.save({"model": model.state_dict()}, checkpoint_id=f"ckpt/{step}")
    ```

    ## References
    - torch_xla `torch_xla/experimental/distributed_checkpoint/manager.py` at v2.9.0
      (`_wait_for_data`: `torch_xla.sync()`, `xm.wait_device_ops()`, called by `save` and
      `save_async`; `xm.mark_step()` in 2.2-2.7)
    - torch_xla `docs/source/perf/spmd_distributed_checkpoint.md` (`dist_cp.save` with
      `SPMDSavePlanner`; `CheckpointManager`)
    - torch_xla `docs/source/learn/xla-overview.md` (reading a tensor or saving a
      checkpoint compiles and runs the pending graph)
    - Applies to torch_xla 2.0-2.9.
    """

    code = "XLA605"
    name = "checkpoint-before-step-sync"
    message = "dist_cp.save after opt.step() and before the sync: each tensor reruns the step"
    fix = "call torch_xla.sync() before it"
    severity = "W"
    versions = "2.0+"
    reported_at = 'the `dist_cp.save(...)` call'
    fix_applicability = "safe"
    bad = [
        "import torch_xla\nimport torch.distributed.checkpoint as dist_cp\n"
        "def train(model, optimizer, loader):\n"
        "    model.to(torch_xla.device())\n"
        "    for step, x in enumerate(loader):\n"
        "        model(x).sum().backward()\n"
        "        optimizer.step()\n"
        "        dist_cp.save({'model': model.state_dict()}, checkpoint_id=f'ckpt/{step}')\n"
        "        torch_xla.sync()\n",
    ]
    good = [
        "import torch_xla\nimport torch.distributed.checkpoint as dist_cp\n"
        "def train(model, optimizer, loader):\n"
        "    model.to(torch_xla.device())\n"
        "    for step, x in enumerate(loader):\n"
        "        model(x).sum().backward()\n"
        "        optimizer.step()\n"
        "        torch_xla.sync()\n"
        "        dist_cp.save({'model': model.state_dict()}, checkpoint_id=f'ckpt/{step}')\n",
        "import torch_xla\nfrom torch_xla.experimental.distributed_checkpoint import CheckpointManager\n"
        "def train(model, optimizer, loader):\n"
        "    model.to(torch_xla.device())\n"
        "    mgr = CheckpointManager('ckpt', 100)\n"
        "    for step, x in enumerate(loader):\n"
        "        model(x).sum().backward()\n"
        "        optimizer.step()\n"
        "        mgr.save_async(step, {'model': model.state_dict()})  # syncs first\n"
        "        torch_xla.sync()\n",
    ]

    def check(self, model):
        saves = model.calls_to(*DIST_CP_SAVES)
        if not saves or not _places_on_device(model):
            return
        sites = model.step_sites()
        in_step = {id(node) for node, _, _, _ in sites}
        callers = model._cache.get("stepcallers", {})
        for call, ctx in saves:
            if id(call) not in in_step or not model.in_xla_code(ctx):
                continue
            state = model.kwarg(call, "state_dict", 0)
            if not isinstance(state, ast.AST) or not any(
                    device_state(model, s, sctx) for s, sctx in state_dicts(model, state, ctx)):
                continue
            if _after_optimizer_step(model, call, ctx, callers):
                name = "dist_cp." + model.call_name(call, ctx).rsplit(".", 1)[-1]
                fix = self.fix if at_least(self.settings, "2.4") else "call xm.mark_step() before it"
                yield self.finding(call, self.message.replace("dist_cp.save", name, 1), fix)


def _after_optimizer_step(model, call, ctx, callers, depth: int = 0) -> bool:
    """``call`` runs after an optimizer step of the step loop it is in (later in the loop's
    body), or sits in a helper some call of which in the step does (a few levels)."""
    loops = [lp for lp in ctx.loops if model.is_step_loop(lp)]
    if loops:
        loop = loops[-1]
        pos = (call.lineno, call.col_offset)
        return any((c.lineno, c.col_offset) < pos and (model.is_optimizer_step(c, cx) or model.is_scaler_step(c, cx)
                                                       or model.call_name(c, cx) == OPTIMIZER_STEP)
                   for c, cx in loop.calls)
    func = ctx.func
    if func is None or depth > 4:
        return False
    return any(_after_optimizer_step(model, c, cx, callers, depth + 1)
               for c, cx in (callers.get(id(func)) or ())[:16])
