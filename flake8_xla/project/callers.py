"""What the calls of one project module pass to the functions of other project modules.

A module's summary (:class:`~.summary.ModuleSummary`) keeps, for each call whose callee its
imports bind to a function of another project module, a small immutable description of
every argument (:class:`CallFacts`, :class:`ArgFacts`), copied out of that module's own
model; and every reference to such a function that is not a call (a function handed on as a
value: its callers are then unseen). :func:`flake8_xla.project.callers_lookup` turns these
into a reverse index: "what do the callers in the project pass to parameter P of my function
F?".
"""

from __future__ import annotations

import ast
import dataclasses

from ..model.loaders import runs_once
from ..model.runtime import chain_parts
from ..model.scopes import UNKNOWN as UNKNOWN_NODE

#: a reference to a function or class of a project module: (file, "f" / "Cls" / "Cls.m")
Ref = tuple[str, str]

#: argument kinds: a name bound to an import (``xm``, ``torch.float32``: ``name`` holds its
#: canonical dotted name), a device loader (``MpDeviceLoader``, ``per_device_loader``), a
#: plain ``DataLoader``, a copy visibly on the host (``model.cpu()``, ``x.to("cpu")``, or a
#: name every value of which is one), a module built on the host and not moved or handed on
#: before the call (``model = TinyLlama(cfg)``; :meth:`~flake8_xla.model.runtime.Runtime.host_module_passed`),
#: a tensor on the XLA device (the model's ``tensor_kind``), an instance of a project class
#: (``Trainer(...)``, ``self`` in a method: ``refs`` names the class), a list or tuple of such
#: instances (``callbacks=[ProgressCallback(), CheckpointCallback(out)]``: ``refs`` names
#: their classes), a checkpoint state in XLA code holding the ``state_dict()`` of a module
#: not visibly on the CPU (``{"model": model.state_dict(), "epoch": epoch}`` after ``model =
#: backend.prepare_model(model)``), or anything else
NAME, DEVICE_LOADER, PLAIN_LOADER, HOST_COPY, HOST_MODULE, DEVICE_TENSOR, INSTANCE, INSTANCES, TENSOR, UNKNOWN = (
    "name", "device_loader", "plain_loader", "host_copy", "host_module", "device_tensor", "instance", "instances",
    "tensor", "unknown")
STATE_DICT = "state_dict"
#: a string literal (``"on_step_end"``): ``name`` holds it (an event name handed to a
#: handler's ``fire(event, ...)``)
CONST = "const"
#: the XLA device (``device = torch_xla.device()``; the model's ``device_place``): a helper's
#: ``device`` parameter every caller fills with it (``build_loader(path, bs, device)``)
XLA_DEVICE = "xla_device"
#: the process index a launcher hands its launched function first (``torch_xla.launch(worker,
#: ...)`` calls ``worker(index, ...)``): the replica's ordinal
LAUNCH_INDEX = "launch_index"
#: a parameter of the calling function handed on as it came (``CallbackHandler(callbacks)``
#: in ``Learner.__init__(self, ..., callbacks)``): ``name`` the parameter, ``refs`` the one
#: function ``(file, qual)``; what it is, is what that function's callers pass
#: (:func:`flake8_xla.project.resolve_arg`)
PARAM = "param"
#: a dict display (or a name bound once to one) some string keys of which hold device
#: tensors (``outputs = {"loss": loss.detach(), "lr": lr}``): ``keys`` names them
DEVICE_DICT = "device_dict"
#: a tensor the calling function computes from what one of its parameters brings in (a batch
#: drawn from a loader parameter, the parameter itself, torch operations and module calls on
#: them: ``loss = loss_fn(model(images), labels)`` for ``for images, labels in loader``):
#: ``name`` the parameter, ``refs`` the one function ``(file, qual)``; a device tensor where
#: that parameter receives a device loader or a device tensor (:func:`flake8_xla.project.resolve_arg`).
#: A :data:`TENSOR` argument may carry the same (``name``, ``refs``).
PARAM_TENSOR = "param_tensor"
#: a batch (or a tensor computed from one) a ``for`` loop of the calling function draws from
#: what a method call on an attribute chain returns, which the reach resolves
#: (``train_loader = self.strategy.process_dataloader(loader)``; ``for batch in
#: enumerate(train_loader)``): ``name`` the call's line and chain (``"37:self.strategy.process_dataloader"``),
#: ``refs`` the calling function; a device tensor where every method the reach resolved the
#: call to returns a device loader (:func:`flake8_xla.project.resolve_arg`)
RECV_BATCH = "recv_batch"
#: what a call of a project function returns (``trainer.fit(build_train_loader(cfg, dev))``,
#: or a name bound once to such a call): ``refs`` the function ``(file, qual)`` as the
#: caller's imports name it; a device or plain loader where every ``return`` of that
#: function gives one (``FunctionFacts.returns_loader``: :func:`flake8_xla.project.resolve_arg`)
RESULT = "result"


@dataclasses.dataclass(frozen=True)
class ArgFacts:
    """One argument a call passes: ``kind`` (:data:`NAME`, :data:`DEVICE_LOADER`,
    :data:`PLAIN_LOADER`, :data:`HOST_COPY`, :data:`HOST_MODULE`, :data:`DEVICE_TENSOR`,
    :data:`INSTANCE`, :data:`INSTANCES`, :data:`STATE_DICT` or :data:`UNKNOWN`); for :data:`NAME`, the canonical
    dotted name (``torch_xla.core.xla_model``); for :data:`INSTANCE` / :data:`INSTANCES`, the
    project classes (``(file, "Cls")``, as the caller's imports name them, through a project
    function that builds one: ``build_model()``), and for an :data:`INSTANCE` visibly moved
    to the XLA device (a module: ``model.to(device)``), ``name`` ``"device"``; :data:`TENSOR`
    for an argument visibly a tensor whose device is not seen (``x.to(device)`` with a
    parameter ``device``); for :data:`STATE_DICT`, ``name`` ``"device"`` when the module
    whose ``state_dict()`` it holds was visibly moved to the XLA device, else ``refs``: the
    methods ``(file, "Cls.m")`` that gave the module back (one of them must move it)."""

    kind: str
    name: str = ""
    refs: tuple[Ref, ...] = ()
    keys: tuple[str, ...] = ()  # DEVICE_DICT: the string keys whose values are device tensors


@dataclasses.dataclass(frozen=True)
class CallFacts:
    """One call of a function of another project module, or one reference to it.

    Attributes:
        target: the callee, as the caller's imports name it (``(file, "train_fn")``; a
            package ``__init__.py`` re-export is followed by the index).
        line: the call's line in the caller (for messages).
        args: the positional arguments, in order (a ``*args`` splat ends them).
        kwargs: ``(name, ArgFacts)`` of the keyword arguments.
        splat: a ``*args`` / ``**kwargs`` splat may supply further parameters.
        escape: not a call but a reference (``xmp.spawn(train_fn)``, ``callbacks=[f]``):
            the function's callers are unseen, so what its parameters hold is unknown.
        feeds_step: what the call returns is what a training step loop in the caller draws
            its batches from (a loop of XLA code there, or where the project's launched code
            reaches it: the project layer checks the caller) (``loader = build_dataloader(ds, 32)`` ...
            ``for batch in pl.MpDeviceLoader(loader, dev):``).
        in_step: the call runs once per training step of XLA code in the caller: inside a
            step loop of its function (:func:`_step_context`; also a method call dispatched on
            a parameter's object: :class:`DispatchFacts`).
        gated: ... only under a step gate (``if step % N == 0:``).
        reiterated: what it returns is iterated once per pass of an enclosing loop
            (``for epoch ...: for batch in loader:``; the model's ``reiterated_calls``).
        in_loop: not :attr:`in_step`, but inside a loop of XLA code (its innermost): a training
            step loop when the callee itself runs the backward and the update once per call
            (``loss = train_step(model, opt, x, y)``; the callee's model decides).
        on_device: the call runs ``forward`` of a module the caller of its function moved to
            the XLA device (``model = MX.to(device)``; ``train_fn(loader, model)``;
            ``model(images, meta)`` there): its tensor arguments are device tensors.
        caller: the qual of the caller's function that makes the call (``""`` at module level).
    """

    target: Ref
    line: int
    args: tuple[ArgFacts, ...] = ()
    kwargs: tuple[tuple[str, ArgFacts], ...] = ()
    splat: bool = False
    escape: bool = False
    feeds_step: bool = False
    in_step: bool = False
    gated: bool = False
    on_device: bool = False
    caller: str = ""
    in_loop: bool = False
    #: what the call returns is iterated once per pass of an enclosing loop that does not
    #: hold the call (the model's ``reiterated_calls``): a one-shot iterable is spent after one
    reiterated: bool = False
    #: a launch (``torch_xla.launch(worker, args=(cfg,))``, a project launch wrapper): the
    #: callee runs as XLA code in the launched processes, wherever the launch is made
    launched: bool = False
    #: what the call returns, a ``return`` of the caller gives back (through names and loader
    #: wrappers: the model's ``returned_loader_origins``): the caller's callers use it
    returned: bool = False
    #: ``(line, index, origin, name, item, again)`` of the calls in the caller (of ``name``)
    #: that receive what this call returns (its ``item``, or -1: whole) as their positional
    #: argument ``index`` (``again``: once per pass of a loop this call is not in): a call a training step loop draws its
    #: batches from (``origin``: ``strategy.device_loader(train_loader)``, trained on when
    #: the callee gives that argument back) or of a project function (``TrainLoop(model,
    #: opt, train_loader)``: trained on when the callee's step loop iterates that parameter)
    feeds_via: tuple[tuple[int, int, bool, str, int, bool], ...] = ()
    #: the lines of the project calls in the own body of a loop that draws its batches from
    #: what this call returns and runs no visible step (``for batch in loader: loss =
    #: train_step(model, batch, opt)``): a training step loop when one of them steps once
    #: per call (the project layer asks the callee)
    feeds_calls: tuple[int, ...] = ()
    #: what the caller trains on is only these items of what the call returns, by position
    #: or constant key (``train_loader, val_loader = build_loaders(cfg)``: ``(0,)``;
    #: ``loaders["train"]``: ``("train",)``); ``()``: the value whole
    feeds_items: tuple[int | str, ...] = ()
    #: the positions of the arguments (plain names) the caller moves to the XLA device after
    #: the call, in the same function and loop nesting (``optimizer = build_optimizer(model)``
    #: ... ``model.to(device)``: an optimizer the callee built holds the host parameters)
    moved_after: tuple[int, ...] = ()

    def argument(self, index: int | None, name: str) -> ArgFacts | None:
        """What this call passes for parameter ``name`` at position ``index`` (``None`` for
        a keyword-only parameter); ``None`` when it passes none (the default), a splat may
        supply it, or the call is an escape."""
        if self.escape:
            return None
        for key, value in self.kwargs:
            if key == name:
                return value
        if index is not None and index < len(self.args):
            return self.args[index]
        return None


@dataclasses.dataclass(frozen=True)
class DispatchFacts:
    """One method call on an object that a parameter of the module's functions brought in:
    ``cb.on_step_end(self, step, loss)`` in ``for cb in self.callbacks:`` where
    ``self.callbacks = list(callbacks)`` and ``callbacks`` is a parameter of
    ``Trainer.__init__``. Which method runs is decided by what the callers of that function
    pass (:data:`INSTANCE` / :data:`INSTANCES` arguments), in other modules.

    Attributes:
        origin: the qual of the function whose parameter holds the object (``Trainer.__init__``).
        param: that parameter's name; ``index`` its position in the ``def`` (``self`` is 0).
        element: the object is one element of what the parameter holds (a list of callbacks).
        method: the method called (``on_step_end``; ``__call__`` for ``model(x)``, which runs
            ``forward`` on a module).
        line: the call's line.
        args, kwargs, splat: what the call passes, as in :class:`CallFacts` (without ``self``).
        in_step: the call runs once per training step of XLA code: inside a step loop of its
            own function (:func:`_step_context`).
        gated: ... only under a step gate (``if step % N == 0:``).
        classes: the project classes the receiver holds when the module itself knows them
            (a launch wrapper's own ``self``: ``Model.receiver_classes``); ``()`` when
            what the callers of ``origin`` pass decides.
    """

    origin: str
    param: str
    index: int
    element: bool
    method: str
    line: int
    args: tuple[ArgFacts, ...] = ()
    kwargs: tuple[tuple[str, ArgFacts], ...] = ()
    splat: bool = False
    in_step: bool = False
    gated: bool = False
    classes: tuple[Ref, ...] = ()
    #: the qual of the function that makes the call (``CallbackHandler.on_step_end``): its
    #: own callers say whether it runs once per step
    caller: str = ""
    #: ``getattr(cb, event)(*args)``: the parameter of ``caller`` naming the method (what its
    #: callers pass there, a string literal, is the method: ``fire("on_step_end", ...)``);
    #: ``method`` is then ``""``
    method_param: str = ""
    #: its ``*args`` / ``**kwargs`` splats are ``caller``'s own, handed on as they came: the
    #: callers' further arguments are the method's
    forwards: bool = False
    #: the lines of the loops of its own function around the call, outermost first; a loop
    #: whose update is a method of an object the reach knows is the step there
    #: (:func:`flake8_xla.project._dispatched_to`)
    loops: tuple[int, ...] = ()
    #: a call on an attribute chain (``origin`` ``""``) whose result a step loop draws from,
    #: and the receiving calls its result is handed to (:attr:`CallFacts.feeds_step`,
    #: :attr:`CallFacts.feeds_via`: ``self.strategy.process_dataloader(self.module.train_dataloader())``)
    feeds_step: bool = False
    feeds_via: tuple = ()

    def argument(self, index: int | None, name: str) -> ArgFacts | None:
        """What this call passes for parameter ``name`` of the method at position ``index``
        counted without ``self``; ``None`` when it passes none or a splat may supply it."""
        for key, value in self.kwargs:
            if key == name:
                return value
        if index is not None and 0 <= index < len(self.args):
            return self.args[index]
        return None


@dataclasses.dataclass(frozen=True)
class SelfSite:
    """One ``self.m(...)`` call of a method, inside a loop of that method or with a result a
    loop iterates once per pass of an enclosing loop (``reiterated``): which ``m`` runs
    depends on the class of the object (an override in another module), and so does whether
    the loop is a training step loop (the override may run the backward and the update), so
    both are settled by the project's reach (:func:`flake8_xla.project._self_site_calls`).

    Attributes:
        method: the method called (``training_step``).
        line: the call's line.
        args, kwargs, splat: what the call passes, as in :class:`CallFacts` (without ``self``).
        loops: for each loop of the calling function around the call, outermost first:
            ``(steps, methods, gated, not_every_pass)``: the loop's own body (not a nested
            loop) visibly runs the backward or an optimizer step (the model's
            ``is_inner_step_loop``), the methods its own body calls on ``self`` (one that
            runs a step once per call makes it the step loop), the call sits under a step
            gate of that loop (``if step % N == 0:``), and it runs on one pass only or after
            the pass's sync (:func:`_not_every_pass`).
        reiterated: the result is iterated once per pass of an enclosing loop.
        feeds: ``(steps, methods)`` of the loop of this method that iterates the result
            (through ``enumerate``, ``tqdm``, a name bound once), as in ``loops``: whether
            that loop is a training step loop depends on the class too; ``None``: no loop
            iterates it.
    """

    method: str
    line: int
    args: tuple[ArgFacts, ...] = ()
    kwargs: tuple[tuple[str, ArgFacts], ...] = ()
    splat: bool = False
    loops: tuple[tuple[bool, tuple[str, ...], bool, bool], ...] = ()
    reiterated: bool = False
    feeds: tuple[bool, tuple[str, ...]] | None = None


def describe_self_sites(model, func, resolve, path: str, classes=None) -> tuple[SelfSite, ...]:
    """The ``self.m(...)`` calls of method ``func`` (its first parameter's methods; not a
    static method) that sit inside a loop of its own, or whose result a loop iterates once
    per pass of an enclosing loop (:class:`SelfSite`); ``()`` for any other function.
    Linear in the function's calls and loops."""
    if func.cls is None or not func.params or any(
            type(d) is ast.Name and d.id == "staticmethod" for d in func.node.decorator_list):
        return ()
    me = func.params[0]
    again = model.reiterated_calls()
    iterating = model.iterating_loops()
    calls = []
    own: dict[int, list[str]] = {}  # loop -> the methods its own body calls on self
    for call, ctx in func.calls:
        f = call.func
        if ctx.func is not func or type(f) is not ast.Attribute or type(f.value) is not ast.Name or f.value.id != me:
            continue
        if ctx.loops:
            names = own.setdefault(id(ctx.loops[-1]), [])
            if f.attr not in names:
                names.append(f.attr)
        if ctx.loops or id(call) in again or id(call) in iterating:
            calls.append((call, ctx))
    if not calls:
        return ()
    site = _Site(resolve, path, classes, getattr(classes, "files", None))
    out = []
    for call, ctx in calls:
        args, kwargs, splat = _describe_arguments(model, call, ctx, site)
        loops = tuple((model.is_inner_step_loop(lp), tuple(own.get(id(lp), ())), _gated(model, ctx, lp),
                       _not_every_pass(model, ctx, lp, call.lineno)) for lp in ctx.loops)
        lp = iterating.get(id(call))
        feeds = None if lp is None else (model.is_inner_step_loop(lp), tuple(own.get(id(lp), ())))
        out.append(SelfSite(call.func.attr, call.lineno, tuple(args), tuple(kwargs), splat, loops,
                            id(call) in again, feeds))
    return tuple(out)


_UNKNOWN_ARG = ArgFacts(UNKNOWN)
_LAUNCH_INDEX_ARG = ArgFacts(LAUNCH_INDEX)


def _loop_feeds(model, described: list) -> tuple[dict[int, tuple[int, ...]], dict[int, frozenset]]:
    """``({id(call): (line, ...)}, {id(call): items})``: for the calls a loop draws its
    batches from (the model's ``loader_origins``) where the loop runs no visible step, the
    lines of the project calls ``described`` (``(i, call, ctx)``) in that loop's own body
    (:attr:`CallFacts.feeds_calls`), and the items of what they return that the loop reaches
    (``loaders.origin_items``). Linear in the module's loops and those calls."""
    from ..model.loaders import origin_items

    in_loop: dict[int, list[int]] = {}
    for _, call, ctx in described:
        if ctx.loops:
            in_loop.setdefault(id(ctx.loops[-1]), []).append(call.lineno)
    out: dict[int, tuple[int, ...]] = {}
    pairs = []
    if not in_loop:
        return out, {}
    for loop in model.loops:
        lines = in_loop.get(id(loop))
        if not lines or type(loop.node) not in (ast.For, ast.AsyncFor) or model.is_step_loop(loop):
            continue
        for e in model.loop_iterables(loop):
            for inner, x in model.loader_origins(e, loop.ctx):
                out[id(inner)] = tuple(sorted(set(lines)))
                pairs.append((inner, x))
    return out, origin_items(pairs)


def _object_method_calls(model, bindings: dict, site, described: set) -> list:
    """``(call, ctx)`` of the method calls, not described, on a local name of a function
    (``trainer.train_epoch(train_loader, epoch)`` with ``trainer`` built from a registry):
    receivers of a value the reach may resolve (edges ``recv:``), for :func:`_fed_arguments`;
    only methods some project module defines."""
    files = site.files
    if files is None:
        return []
    out = []
    for call, ctx in model.calls:
        f = call.func
        if type(f) is not ast.Attribute or type(f.value) is not ast.Name or id(call) in described \
                or ctx.func is None or f.value.id in bindings or not call.args \
                or (ctx.func.cls is not None and ctx.func.params and f.value.id == ctx.func.params[0]):
            continue
        if files.defines(f.attr):
            out.append((call, ctx))
    return out


def _fed_arguments(model, described: list, more: list = ()) -> dict[int, tuple[tuple[int, int, bool, str, int, bool], ...]]:
    """``{id(call): ((line, index, origin, name, item, again), ...)}``: the calls whose value another call of
    the module receives as its positional argument ``index`` (``train_loader =
    build_loader(...)`` ... ``TrainLoop(model, opt, train_loader)``;
    :attr:`CallFacts.feeds_via`), for the receiving calls that a training step loop draws its
    batches from (``origin``: the model's ``step_loader_origins``,
    ``strategy.device_loader(train_loader)``) and the calls of project functions
    ``described`` (``(i, call, ctx)``), each with the name it calls (``device_loader``,
    ``TrainLoop``: two calls on one line are told apart) and the item of what this call
    returns that is handed (``train, val = build_loaders()``; -1: the value whole), and
    ``again``: the receiving call runs once per pass of a loop that does not hold this call
    (``batches = device_loader(loader)`` before ``for epoch ...: train_epoch(batches)``).
    Linear in those calls' arguments."""
    origins = model.step_loader_origins(any_code=True)
    receivers = [(call, ctx) for _, call, ctx in described if id(call) not in origins]
    receivers += [(call, ctx) for call, ctx in more if id(call) not in origins]
    if origins:
        receivers += [(call, ctx) for call, ctx in model.calls if id(call) in origins]
    out: dict[int, list] = {}
    where: dict[int, object] = {}
    for call, ctx in receivers:
        origin = id(call) in origins
        f = call.func
        name = f.id if type(f) is ast.Name else f.attr if type(f) is ast.Attribute else ""
        if not name:
            continue
        for i, a in enumerate(call.args):
            if type(a) is ast.Starred:
                break
            if type(a) not in (ast.Name, ast.Call, ast.Attribute):
                continue
            for inner, x in model.loader_origins(a, ctx):
                item = x[1] if type(x) is tuple and len(x) == 2 and x[0] == "item" else -1
                if not where:
                    where.update((id(c), cx) for c, cx in model.calls)
                octx = where.get(id(inner))  # the receiving call runs once per pass of a loop the origin is not in
                again = octx is not None and any(o not in octx.loops and not runs_once(o.node) for o in ctx.loops)
                out.setdefault(id(inner), []).append((call.lineno, i, origin, name, item, again))
    return {k: tuple(v) for k, v in out.items()}


def _moved_after(model, call: ast.Call, ctx, described: list) -> tuple[int, ...]:
    """:attr:`CallFacts.moved_after` of one call: the positional arguments that are plain
    names of modules on the host at the call (``described``: :data:`HOST_MODULE`), moved to the XLA device by a later ``.to()`` of
    the same function and loop nesting that runs with the call, nothing rebinding the name
    in between (the model's checks of XLA405)."""
    if ctx.func is None or not model.in_xla_code(ctx):
        return ()
    end = getattr(call, "end_lineno", call.lineno)
    out = []
    for i, a in enumerate(call.args):
        if type(a) is ast.Starred:
            break
        if type(a) is not ast.Name or i >= len(described) or described[i].kind != HOST_MODULE:
            continue  # (a module visibly on the host at the call)
        for line, move, mvctx in model.moves(a.id, ctx):
            if line <= end or mvctx.func is not ctx.func or mvctx.loops != ctx.loops:
                continue
            if not model._device_move(move, mvctx) or not model.runs_with((call, ctx), (move, mvctx)):
                continue
            if model._same_module(a.id, ctx, call.lineno, mvctx, line) and not _replaced_unused(model, call, ctx, line):
                out.append(i)
            break
    return tuple(out)


def _replaced_unused(model, call: ast.Call, ctx, move_line: int) -> bool:
    """``call`` is the value of ``name = call`` whose name its function binds again after
    line ``move_line``, with no read of it in between (``optimizer = build_optimizer(model)``;
    ``model.to(dev)``; ``optimizer = build_optimizer(model)``: the first one is never used)."""
    func = ctx.func
    bindings = None
    for stmt_name in _assigned_names(model, call, ctx):
        bindings = model.lookup(stmt_name, ctx, None) or ()
        later = [line for line, kind, target, bctx in bindings
                 if kind == "value" and line > move_line and bctx is not None and bctx.func is func]
        if not later:
            continue
        end = min(later)
        if not any(type(n) is ast.Name and n.id == stmt_name and type(n.ctx) is ast.Load
                   and call.lineno < n.lineno <= end for n in ast.walk(func.node)):
            return True
    return False


def _assigned_names(model, call: ast.Call, ctx) -> list[str]:
    """The names a plain ``name = call`` assignment binds to ``call``."""
    out = []
    func = ctx.func
    if func is None:
        return out
    for name in func.names:
        for line, kind, target, bctx in model.lookup(name, ctx, None) or ():
            if kind == "value" and target is call:
                out.append(name)
    return out


def describe_calls(model, resolve, bindings: dict, path: str = "", classes=None) -> tuple[CallFacts, ...]:
    """The calls and references of the module of ``model`` into other project modules, and
    the constructor calls of its own top-level classes that pass instances of project classes
    (``Loop([Throughput(), BadSync()])``: target ``(path, "Loop")``, for the dispatch index).

    Args:
        model: the module's :class:`~flake8_xla.model.Model` (walked; not kept).
        resolve: ``parts -> Ref | None``: the project function or class a dotted chain
            (``("utils", "train_fn")``) names through the module's imports.
        bindings: the names the module's imports bind to project modules.
        path: the module's file (names its own classes in :data:`INSTANCE` arguments).
        classes: ``Ref -> Ref | None``: the project class a called project name builds
            (the class itself, or what a builder function returns); ``None``: the name.

    Returns:
        One :class:`CallFacts` per call (in walk order) and per non-call reference. Linear
        in the module: one pass over its calls and, only when its imports bind project
        names, one walk of its tree for references.
    """
    if not bindings:
        return ()
    out: list[CallFacts] = []
    nodes: list = []  # (index in out, call, ctx) of each project call described
    call_funcs: set[int] = set()
    quals = model.function_quals()
    site = _Site(resolve, path, classes, getattr(classes, "files", None))
    own = {c.name for c in model.classes if c.ctx.func is None and c.ctx.scope is model.module_scope}
    pending_targets: list = []  # (target, call, ctx): the further classes of a loop over instances
    for call, ctx in model.calls:
        f = call.func
        call_funcs.add(id(f))
        root = f
        while type(root) is ast.Attribute:
            root = root.value
        if type(root) is ast.Call and type(f) is ast.Attribute and root is f.value:
            target = _super_method(model, f, ctx, site)  # super().__init__(model, ..., callbacks)
            if target is not None:
                args, kwargs, splat = _describe_arguments(model, call, ctx, site)
                nodes.append((len(out), call, ctx))
                out.append(CallFacts(target, call.lineno, tuple(args), tuple(kwargs), splat,
                                     caller=quals.get(id(ctx.func), ""),
                                     returned=id(call) in model.returned_loader_origins()))
            continue
        if type(root) is not ast.Name:
            continue
        local = False
        if root.id in bindings:
            target = resolve(chain_parts(f))
        elif f is root:
            target = _instance_forward(model, f, ctx, site)  # model(x): the forward of its class
            if target is None and f.id in own and model.class_named(f.id, ctx) is not None:
                target, local = (path, f.id), True  # Loop([Cb1(), Cb2()]): a class of this module
        else:
            target = _instance_method(model, f, ctx, site)  # self.logger.log(step, loss)
            if target is None and type(f.value) is ast.Name:
                target = _instance_forward(model, f, ctx, site)
            if target is None and type(f.value) is ast.Name:
                target = _inherited_self_method(model, f, ctx, resolve)  # self.log(...) of an imported base
            if target is None and type(f.value) is ast.Name:
                element = _element_methods(model, f, ctx, site)  # for cb in [History(), Timer()]: cb.m()
                if element:
                    target, more = element[0], element[1:]
                    pending_targets.extend((t, call, ctx) for t in more)
        if target is None:
            continue
        args, kwargs, splat = _describe_arguments(model, call, ctx, site)
        if local and not any(a.kind in (INSTANCE, INSTANCES) for a in args + [a for _, a in kwargs]):
            continue  # a class of the module counts only when handed instances of other modules' classes
        # (a module without torch_xla, a framework's trainer: its loop is XLA code where the
        # project's launched code reaches it, which the reach settles)
        in_step, gated = _step_context(model, ctx, xla_only=model.uses_torch_xla, line=call.lineno) \
            if ctx.loops else (False, False)
        in_loop = False
        if not in_step and ctx.loops and model.in_xla_code(ctx.loops[-1].ctx):
            in_loop, gated = True, _gated(model, ctx, ctx.loops[-1])  # a step only if the callee steps
        nodes.append((len(out), call, ctx))
        out.append(CallFacts(target, call.lineno, tuple(args), tuple(kwargs), splat,
                             feeds_step=id(call) in model.step_loader_origins(any_code=True),
                             feeds_items=tuple(sorted(model.step_loader_origin_items(any_code=True).get(id(call), ()),
                                                      key=repr)),
                             reiterated=id(call) in model.reiterated_calls(),
                             caller=quals.get(id(ctx.func), "") if ctx.func is not None else "",
                             in_step=in_step, gated=gated, in_loop=in_loop,
                             returned=id(call) in model.returned_loader_origins(),
                             moved_after=_moved_after(model, call, ctx, args)))
        while pending_targets:  # the same call on the loop's other classes
            more, _, _ = pending_targets.pop(0)
            out.append(dataclasses.replace(out[-1], target=more))
    via = _fed_arguments(model, nodes, _object_method_calls(model, bindings, site, {id(c) for _, c, _ in nodes}))
    loops, loop_items = _loop_feeds(model, nodes)
    for i, call, _ in nodes if via or loops else ():
        if id(call) in via or id(call) in loops:
            items = out[i].feeds_items if out[i].feeds_step else tuple(sorted(loop_items.get(id(call), ()), key=repr))
            out[i] = dataclasses.replace(out[i], feeds_via=via.get(id(call), ()), feeds_calls=loops.get(id(call), ()),
                                         feeds_items=items)
    out.extend(_launch_calls(model, resolve, site, quals, call_funcs))
    inner: set[int] = set()
    chains = []
    for node in _nodes(model.tree):
        t = type(node)
        if t is ast.Attribute:
            inner.add(id(node.value))
            chains.append(node)
        elif t is ast.Name and type(node.ctx) is ast.Load and node.id in bindings:
            chains.append(node)
    for node in chains:
        if id(node) in inner or id(node) in call_funcs:
            continue
        root = node
        while type(root) is ast.Attribute:
            root = root.value
        if type(root) is not ast.Name or root.id not in bindings or type(root.ctx) is not ast.Load:
            continue
        target = resolve(chain_parts(node))
        if target is not None:
            out.append(CallFacts(target, node.lineno, escape=True))
    return tuple(out)


def _nodes(tree: ast.AST) -> list:
    """Every node of ``tree`` in ``ast.walk``'s order (breadth first, each node's children in
    field order), as a list built in one loop: ``ast.walk`` without its two generators a
    node, about half the time."""
    out = [tree]
    i = 0
    while i < len(out):
        node = out[i]
        i += 1
        for field in node._fields:
            value = getattr(node, field, None)
            if type(value) is list:
                for v in value:
                    if isinstance(v, ast.AST):
                        out.append(v)
            elif isinstance(value, ast.AST):
                out.append(value)
    return out


def _launch_calls(model, resolve, site: "_Site", quals: dict, seen: set[int]) -> list[CallFacts]:
    """A launch of another project module's function is a call of it, as the launcher makes
    it: ``torch_xla.launch(worker, args=(cfg,))`` / ``xmp.spawn(...)`` calls ``worker(index,
    cfg)``; a project launch wrapper handing its own ``self`` at position 0 of the launched
    function's ``args`` (``backend.launch(worker, args=(cfg,))`` with ``TPUBackend.launch``
    running ``torch_xla.launch(fn, args=(self, *args))``: the model's
    ``project_launcher_selves``) calls ``worker(index, <TPUBackend>, ...)``, its later
    arguments unknown. The process index is :data:`LAUNCH_INDEX`. The launched name is added to
    ``seen`` (no escape reference is described for it); a launch whose arguments cannot be
    read (a ``functools.partial``, ``args`` not a tuple display, a wrapper handing on no
    ``self`` or one that disagrees) stays an escape."""
    out: list[CallFacts] = []
    selves = model.project_launcher_selves or ()
    for call, ctx, targets, _ in model.launches():
        target = model.kwarg(call, "fn", 0)
        if targets or type(target) not in (ast.Name, ast.Attribute):
            continue
        parts = chain_parts(target)
        ref = resolve(parts) if parts is not None else None
        if ref is None:
            continue
        f = call.func
        last = f.attr if type(f) is ast.Attribute else f.id if type(f) is ast.Name else None
        q = model.call_name(call, ctx)
        args: list[ArgFacts] = [_LAUNCH_INDEX_ARG]
        if q in model.XLA_LAUNCHERS or q in model.TORCH_LAUNCHERS:
            given = model.kwarg(call, "args", 1)
            if given is None:
                given = ast.Tuple(elts=[], ctx=ast.Load())
            if type(given) is not ast.Tuple or any(type(e) is ast.Starred for e in given.elts):
                continue
            args.extend(_describe(model, e, ctx, call.lineno, site, call) for e in given.elts)
            splat = False
        else:
            if site.files is not None:
                from .summary import wrapper_receiver_differs

                if wrapper_receiver_differs(model, call, ctx, site.resolve, site.path, site.files):
                    continue  # SPMDBackend().launch(worker): not the wrapper's class
            entries = {(r, pos) for n, r, pos in selves if n == last}
            if len(entries) != 1:
                continue
            cls, pos = next(iter(entries))
            if pos != 0 or not cls[1]:
                continue
            args.append(ArgFacts(INSTANCE, refs=(cls,)))
            splat = True
        seen.add(id(target))
        out.append(CallFacts(ref, call.lineno, tuple(args), (), splat, launched=True,
                             caller=quals.get(id(ctx.func), "") if ctx.func is not None else ""))
    return out


def _super_method(model, func: ast.Attribute, ctx, site: "_Site") -> Ref | None:
    """``(file, "Base.m")`` for ``super().m`` in a method of a class whose first base is a
    class of another project module (``class TPUTrainer(BaseTrainer)``); else ``None``."""
    sup = func.value
    method = ctx.func
    if type(sup) is not ast.Call or type(sup.func) is not ast.Name or sup.func.id != "super" \
            or method is None or method.cls is None or not method.cls.node.bases \
            or model.lookup("super", ctx, None) is not None:
        return None
    parts = chain_parts(method.cls.node.bases[0])
    target = site.resolve(parts) if parts is not None else None
    if target is None or "." in target[1] or target[0] == site.path:
        return None
    return (target[0], f"{target[1]}.{func.attr}")


def _instance_method(model, func: ast.AST, ctx, site: "_Site") -> Ref | None:
    """``(file, "Cls.m")`` when ``func`` is ``obj.m`` and ``obj`` holds an instance of class
    ``Cls`` of another project module (the model's ``instance_class``: ``saver =
    Saver(dir)``, ``self.logger = MetricLogger()`` in ``__init__``, a project builder's
    class); else ``None``. A method ``Cls`` inherits resolves where the index looks it up."""
    if type(func) is not ast.Attribute or type(func.value) not in (ast.Name, ast.Attribute):
        return None
    target = _class_ref(model, func.value, ctx, site)
    if target is None or target[0] == site.path or "." in target[1]:
        return None
    return (target[0], f"{target[1]}.{func.attr}")


def _element_methods(model, func: ast.Attribute, ctx, site: "_Site") -> list:
    """``[(file, "Cls.m"), ...]`` for ``cb.m`` with ``cb`` the variable of a ``for`` loop of the
    function over a list or tuple of instances of project classes of other modules (a
    display, or a name bound once to one: ``callbacks = [History(), Timer()]``; ``for cb in
    callbacks: cb.on_step_end(loss)``), one per class, when every element is such an
    instance; else ``[]``."""
    bindings = model.read_bindings(func.value, ctx)
    if not bindings or len(bindings) != 1 or bindings[0][1] != "unknown":
        return []
    found = _loop_iterable(bindings[0][0], func.value.id, ctx)
    if found is None or (type(found[0]) is ast.Call):
        return []
    elements = _elements(model, found[0], found[1].ctx)
    if not elements:
        return []
    out: list = []
    for elt, ectx in elements:
        ref = _class_ref(model, elt, ectx, site) if type(elt) is ast.Call else None
        if ref is None or ref[0] == site.path or "." in ref[1]:
            return []
        m = (ref[0], f"{ref[1]}.{func.attr}")
        if m not in out:
            out.append(m)
    return out


def _inherited_self_method(model, func: ast.Attribute, ctx, resolve) -> Ref | None:
    """``(file, "Base.m")`` for ``self.m`` in a method of a top-level class of this module
    that does not define ``m`` itself (nor a base of this module), with ``Base`` its first
    base another project module defines (``class MnistNet(LiteModule)``: ``self.log(...)``
    in ``training_step`` runs ``LiteModule.log``; the callers index looks an inherited
    method up in ``Base``'s own bases); else ``None``."""
    fn = ctx.func
    cls = fn.cls if fn is not None else None
    if cls is None or not fn.params or func.value.id != fn.params[0] or cls.ctx.func is not None \
            or func.attr in model._method_table(cls):
        return None
    for base in cls.node.bases:
        parts = chain_parts(base)
        if parts is None or (len(parts) == 1 and model.class_named(parts[0], cls.ctx) is not None):
            continue
        ref = resolve(parts)
        if ref is not None and "." not in ref[1]:
            return (ref[0], f"{ref[1]}.{func.attr}")
    return None


def _instance_forward(model, func: ast.AST, ctx, site: "_Site") -> Ref | None:
    """``(file, "Cls.forward")`` when ``func`` (``model`` in ``model(x)``) holds an instance
    of class ``Cls`` of another project module (the model's ``instance_class``; a project
    builder's class: ``build_model().to(device)``)."""
    got = model.instance_class(func, ctx)
    if got is None or got[0] != "import":
        return None
    target = _class_ref(model, func, ctx, site)
    return (target[0], target[1] + ".forward") if target is not None and "." not in target[1] else None


def _describe_arguments(model, call: ast.Call, ctx, site: "_Site") -> tuple[list, list, bool]:
    """``(args, kwargs, splat)`` of ``call``: each positional argument up to a ``*args``
    splat and each keyword argument described (:func:`_describe`); ``splat`` when a
    ``*args`` / ``**kwargs`` may supply further parameters."""
    args: list[ArgFacts] = []
    splat = False
    for a in call.args:
        if type(a) is ast.Starred:
            splat = True
            break
        args.append(_describe(model, a, ctx, call.lineno, site, call))
    kwargs = []
    for kw in call.keywords:
        if kw.arg is None:
            splat = True
        else:
            kwargs.append((kw.arg, _describe(model, kw.value, ctx, call.lineno, site, call)))
    return args, kwargs, splat


def _describe(model, expr: ast.AST, ctx, line: int, site: "_Site | None" = None,
              call: ast.Call | None = None) -> ArgFacts:
    """One argument of ``call`` on ``line``, from the caller's model: an import-bound name, a
    host copy, a module built on the host, a loader kind, an instance (or a list of
    instances) of project classes (with ``site``), a tensor, a checkpoint state, a dict of
    device tensors (a name handed to no other call), or unknown."""
    try:
        if type(expr) is ast.Constant and type(expr.value) is str:
            return ArgFacts(CONST, expr.value)
        if type(expr) in (ast.Name, ast.Attribute):
            q = model.qualname(expr, ctx)
            if q is not None:
                return ArgFacts(NAME, q)
        if type(expr) in (ast.Name, ast.Call) and model.device_place(expr, ctx) == "xla":
            return ArgFacts(XLA_DEVICE)
        if _host_copy(model, expr, ctx):
            return ArgFacts(HOST_COPY)
        if type(expr) is ast.Name and model.in_xla_code(ctx) and model.host_module_passed(expr, ctx, line):
            return ArgFacts(HOST_MODULE)
        if model.tensor_kind(expr, ctx) == "device":
            return ArgFacts(DEVICE_TENSOR)
        kind = model.loader_kind(expr, ctx)
        if kind == "device":
            return ArgFacts(DEVICE_LOADER)
        if kind == "plain":
            return ArgFacts(PLAIN_LOADER)
        if site is not None:
            found = _instances(model, expr, ctx, site)
            if found is not None:
                return found
        if site is not None and ctx.func is not None and type(expr) is ast.Name:
            key = _recv_batch(model, expr, ctx)
            if key is not None:
                return ArgFacts(RECV_BATCH, key, refs=_source_ref(model, ctx, site))
        if site is not None:
            result = _result_of(model, expr, ctx, site)
            if result is not None:
                return result
        if _moved_tensor(model, expr, ctx):
            source = _tensor_param(model, expr, ctx) if site is not None else None
            return ArgFacts(TENSOR, source, refs=_source_ref(model, ctx, site)) if source else ArgFacts(TENSOR)
        if type(expr) in (ast.Name, ast.Dict, ast.List, ast.Tuple) \
                and (model.in_xla_code(ctx) or model.is_launched(ctx, multi_only=True)):
            state = _state_dict(model, expr, ctx)
            if state is not None:
                return state  # (a checkpoint that also holds the loss is a checkpoint)
        if type(expr) in (ast.Name, ast.Dict) and model.in_xla_code(ctx):
            keys = model.dict_device_keys(expr, ctx, passed_to=call)
            if keys:
                return ArgFacts(DEVICE_DICT, keys=keys)
        if site is not None and type(expr) is ast.Name:
            param = _own_param(model, expr, ctx, site)
            if param is not None:
                return param
        if site is not None and ctx.func is not None and (model.in_xla_code(ctx) or not model.uses_torch_xla):
            source = _tensor_param(model, expr, ctx)  # (a module without torch_xla: its callers settle it)
            refs = _source_ref(model, ctx, site) if source else ()
            if refs:
                return ArgFacts(PARAM_TENSOR, source, refs=refs)
    except RecursionError:
        pass
    return _UNKNOWN_ARG


def _result_of(model, expr: ast.AST, ctx, site: "_Site") -> ArgFacts | None:
    """:data:`RESULT` for a call of a function of another project module (a plain function
    its imports name: ``build_train_loader(cfg, dev)``, ``data.make_loader(ds)``), or a name
    whose one value is such a call; ``None`` otherwise."""
    if type(expr) is ast.Name:
        single = model.single_value(expr, ctx)
        if single is None or type(single[0]) is not ast.Call:
            return None
        expr = single[0]
    parts = chain_parts(expr.func) if type(expr) is ast.Call else None
    if parts is None:
        return None
    try:
        ref = site.resolve(parts)
    except (Exception, RecursionError):
        return None
    if ref is None or "." in ref[1] or ref[0] == site.path:
        return None
    return ArgFacts(RESULT, refs=(ref,))


def _source_ref(model, ctx, site: "_Site") -> tuple:
    qual = model.function_quals().get(id(ctx.func)) if ctx.func is not None else None
    return ((site.path, qual),) if qual and site.path else ()


#: tensor methods whose result is no device tensor of the receiver's (a host read, a size, a move)
_NOT_SAME_DEVICE = frozenset({"item", "tolist", "numpy", "cpu", "to", "cuda", "size", "dim", "numel", "stride",
                              "data_ptr", "element_size", "nelement", "is_contiguous", "get_device", "type",
                              "__len__", "keys", "values", "items", "get"})


def _tensor_param(model, expr: ast.AST, ctx, depth: int = 0) -> str | None:
    """The parameter of ``expr``'s function (not a method's ``self``) whose value decides
    where the tensor ``expr`` lives: the parameter itself, a batch drawn from it (``for x, y
    in loader`` / ``enumerate(loader)``), or torch operations, tensor methods, operators,
    subscripts, module calls (:meth:`~flake8_xla.model.Model.used_as_module`, a module value,
    a loss function) and project functions computing on parameters (``tensor_of``) over
    such values, through names bound in the function; ``None`` when no one parameter decides
    (none, two, or anything unseen). Bounded depth."""
    if depth > 10 or ctx is None or ctx.func is None:
        return None
    t = type(expr)
    if t is ast.Name:
        bindings = model.read_bindings(expr, ctx)
        if not bindings:
            return None
        found = set()
        for line, kind, target, b_ctx in bindings:
            if kind == "param":
                func = ctx.func
                if target is not func or (func.cls is not None and func.params and func.params[0] == expr.id):
                    return None
                found.add(expr.id)
            elif kind == "item" and type(target) is tuple and type(target[0]) is ast.Name:
                got = _tensor_param(model, target[0], b_ctx or ctx, depth + 1)  # x, y = batch
                if got is None:
                    return None
                found.add(got)
            elif kind == "value" and isinstance(target, ast.AST):
                got = _tensor_param(model, target, b_ctx or ctx, depth + 1)
                if got is None:
                    return None
                found.add(got)
            elif kind == "unknown":
                got = _drawn_from(model, expr.id, line, ctx, depth)
                if got is None:
                    return None
                found.add(got)
            else:
                return None
        return found.pop() if len(found) == 1 else None
    if t is ast.Subscript:
        return _tensor_param(model, expr.value, ctx, depth + 1)
    if t is ast.UnaryOp and type(expr.op) is not ast.Not:
        return _tensor_param(model, expr.operand, ctx, depth + 1)
    if t in (ast.BinOp, ast.Compare):
        parts = (expr.left, expr.right) if t is ast.BinOp else (expr.left, *expr.comparators)
        return _one_source(model, parts, ctx, depth)
    if t is not ast.Call:
        return None
    f = expr.func
    q = model.call_name(expr, ctx)
    args = [a for a in expr.args if type(a) is not ast.Starred]
    if q is not None:
        from ..model.tensors import TORCH_FACTORIES, _torch_op
        if _torch_op(q) and q not in TORCH_FACTORIES:
            return _one_source(model, args, ctx, depth)
        computed = model.project_tensor_of(f, ctx) if model.project_defs is not None else ()
        if computed:
            return _one_source(model, [args[i] for i in computed if i < len(args)], ctx, depth)
        return None
    if type(f) is ast.Attribute:
        if f.attr in _NOT_SAME_DEVICE or model.qualname(f, ctx) is not None:
            return None
        if type(f.value) is ast.Name and (model.is_model(f.value, ctx) or model.used_as_module(f.value, ctx)):
            return None  # model.parameters(), model.state_dict(): no tensor of the input
        return _tensor_param(model, f.value, ctx, depth + 1)
    if type(f) is ast.Name and (model.used_as_module(f, ctx) or model.is_model(f, ctx) or model.is_loss_fn(f, ctx)
                                or _self_module(model, f, ctx)):
        return _one_source(model, args, ctx, depth)  # model(images), criterion(outputs, labels), self(x)
    return None


def _self_module(model, f: ast.Name, ctx) -> bool:
    """``f`` is the ``self`` of a method of a module class (``self(x)`` runs its forward)."""
    func = ctx.func
    return func is not None and func.cls is not None and bool(func.params) and f.id == func.params[0] \
        and (model.is_module_class(func.cls) or "forward" in model._method_table(func.cls))


def _one_source(model, parts, ctx, depth: int) -> str | None:
    """The one parameter the tensors among ``parts`` come from (constants and Python
    numbers aside), else ``None``."""
    found = set()
    for e in parts:
        if type(e) is ast.Constant:
            continue
        got = _tensor_param(model, e, ctx, depth + 1)
        if got is not None:
            found.add(got)
    return found.pop() if len(found) == 1 else None


def _recv_batch(model, expr: ast.Name, ctx) -> str | None:
    """``"<line>:<chain>.<method>"`` (``"37:self.strategy.process_dataloader"``) of the method call on an
    attribute chain whose result a ``for`` loop of ``ctx``'s function draws ``expr`` from
    (the loop variable itself, not ``enumerate``'s index; the iterable the call, or a name
    bound once to it in the function), else ``None``."""
    bindings = model.read_bindings(expr, ctx)
    if not bindings or len(bindings) != 1 or bindings[0][1] != "unknown":
        return None
    found = _loop_iterable(bindings[0][0], expr.id, ctx)
    if found is None:
        return None
    it, loop = found
    if type(it) is ast.Name:
        single = model.single_value(it, loop.ctx)
        if single is None or single[1] is None or single[1].func is not ctx.func:
            return None
        it = single[0]
    if type(it) is not ast.Call or type(it.func) is not ast.Attribute:
        return None
    parts = chain_parts(it.func.value)
    return f"{it.lineno}:{'.'.join(parts)}.{it.func.attr}" if parts is not None and len(parts) > 1 else None


def _loop_iterable(line: int, name: str, ctx):
    """``(iterable, loop)`` of the ``for`` loop of ``ctx``'s own function at ``line`` that binds
    ``name`` (``for x, y in loader``; ``in enumerate(loader)``: ``loader``), else ``None``
    (no such loop, or ``name`` is ``enumerate``'s index)."""
    for loop in ctx.loops:
        node = loop.node
        if node.lineno != line or type(node) not in (ast.For, ast.AsyncFor) or loop.ctx.func is not ctx.func:
            continue
        it, target = node.iter, node.target
        if type(it) is ast.Call and type(it.func) is ast.Name and it.func.id == "enumerate" and it.args \
                and type(target) in (ast.Tuple, ast.List) and len(target.elts) == 2:
            if any(type(n) is ast.Name and n.id == name for n in ast.walk(target.elts[0])):
                return None  # the index
            it = it.args[0]
        return it, loop
    return None


def _drawn_from(model, name: str, line: int, ctx, depth: int) -> str | None:
    """The parameter a ``for`` loop of ``ctx``'s function at ``line`` draws ``name`` from
    (``for x, y in loader`` / ``in enumerate(loader)``, not the index), else ``None``."""
    found = _loop_iterable(line, name, ctx)
    if found is None or type(found[0]) is not ast.Name:
        return None
    return _tensor_param(model, found[0], found[1].ctx, depth + 1)


def _own_param(model, expr: ast.Name, ctx, site: "_Site") -> ArgFacts | None:
    """:data:`PARAM` when ``expr`` reads a parameter of its own function (not a method's
    ``self``) that nothing in it rebinds; else ``None``."""
    func = ctx.func
    if func is None or (func.cls is not None and func.params and func.params[0] == expr.id):
        return None
    bindings = model.read_bindings(expr, ctx)
    if not bindings or any(kind != "param" or target is not func for _, kind, target, _ in bindings):
        return None
    qual = model.function_quals().get(id(func))
    return ArgFacts(PARAM, expr.id, refs=((site.path, qual),)) if qual and site.path else None


def _state_dict(model, expr: ast.AST, ctx, depth: int = 0) -> ArgFacts | None:
    """:data:`STATE_DICT` when ``expr`` (a dict, list or tuple display, or a name bound once
    to one) holds ``X.state_dict()`` of a plain name ``X`` every value of which is a move to
    the XLA device (``model.to(device)``, the model's ``_on_device``: ``name`` ``"device"``)
    or what a method of the object a launch wrapper's ``self`` brought in gives back for
    ``X`` (``model = backend.prepare_model(model)``, ``backend.compile(model)``: ``refs``
    names those methods, ``(file, "Cls.m")``, for the receiving module to ask whether one
    moves it to the XLA device); else None."""
    if depth > 2:
        return None
    t = type(expr)
    if t is ast.Name:
        values = model.values(expr, ctx)
        if values and len(values) == 1 and values[0][1] is not None \
                and type(values[0][0]) in (ast.Dict, ast.List, ast.Tuple):
            return _state_dict(model, *values[0], depth + 1)
        return None
    elts = expr.values if t is ast.Dict else expr.elts if t in (ast.List, ast.Tuple) else ()
    for e in elts:
        if type(e) is ast.Call and type(e.func) is ast.Attribute and e.func.attr == "state_dict" and not e.args \
                and _self_attr_on_device(model, e.func.value, ctx):
            return ArgFacts(STATE_DICT, "device")  # {"model": self.model.state_dict()}, self.model moved in __init__
        if type(e) is ast.Call and type(e.func) is ast.Attribute and e.func.attr == "state_dict" and not e.args \
                and type(e.func.value) is ast.Name and model.qualname(e.func.value, ctx) is None:
            name = e.func.value.id
            values = model.values(e.func.value, ctx)
            if not values or any(v is None or c is None for v, c in values):
                continue
            moved, refs = False, []
            for v, c in values:
                if model._on_device(v, c, 0):
                    moved = True
                    continue
                got = _backend_gives_back(model, v, c, name)
                if got is None:
                    break
                refs.extend(r for r in got if r not in refs)
            else:
                return ArgFacts(STATE_DICT, "device" if moved else "", tuple(refs))
    return None


def _self_attr_on_device(model, expr: ast.AST, ctx) -> bool:
    """``expr`` is ``self.x`` in a method whose class's own methods store in ``self.x`` only
    moves to the XLA device (``self.model = model.to(self.device)``)."""
    func = ctx.func
    if type(expr) is not ast.Attribute or type(expr.value) is not ast.Name or func is None or func.cls is None \
            or not func.params or expr.value.id != func.params[0]:
        return False
    values = func.cls.attrs.get(expr.attr)
    return bool(values) and all(v is not None and c is not None and model._on_device(v, c, 0) for v, c in values[:8])


def _backend_gives_back(model, value: ast.AST, ctx, name: str) -> tuple | None:
    """The methods ``(file, "Cls.m")`` a call ``backend.m(..., name, ...)`` runs on a
    receiver whose project classes are known (``Model.receiver_classes``: a launch
    wrapper's ``self``); None otherwise."""
    if type(value) is not ast.Call or type(value.func) is not ast.Attribute \
            or not any(type(a) is ast.Name and a.id == name for a in value.args):
        return None
    classes = model.receiver_classes(value.func.value, ctx)
    return tuple((f, f"{c}.{value.func.attr}") for f, c in classes) if classes else None


def _moved_tensor(model, expr: ast.AST, ctx) -> bool:
    """``expr`` is a tensor placed on some device (``batch["x"].to(device)``,
    ``torch.randn(8, 4, device=device)``), a name every value of which is one, or a batch
    drawn from an iterable (``for ids, labels in loader:``); what the device is may be
    unseen (a parameter)."""
    if type(expr) is ast.Name:
        values = model.values(expr, ctx)
        if values is None:  # for ids, labels in loader: a batch drawn from an iterable
            return model._batch_or_tensor(expr, ctx, 0)
        return bool(values) and all(v is not None and c is not None and _moved_tensor(model, v, c) for v, c in values)
    if type(expr) is not ast.Call:
        return False
    f = expr.func
    if type(f) is ast.Attribute and f.attr == "to" and expr.args:
        return model.move_target(expr, ctx) != "dtype" and not _to_host(expr)
    device = model.kwarg(expr, "device")
    if device is None or device is UNKNOWN_NODE:
        return False
    q = model.call_name(expr, ctx) or ""
    return q.startswith("torch.") and not (type(device) is ast.Constant and device.value == "cpu")


@dataclasses.dataclass(frozen=True)
class _Site:
    """Where the described calls are: ``resolve`` (``parts -> Ref | None`` through the
    module's imports), the module's ``path``, and ``classes`` (``Ref -> Ref | None``: the
    class a project name builds, or ``None`` to take the name as the class)."""

    resolve: object
    path: str
    classes: object = None
    #: the project's ProjectFiles, to read factories from (``classes.files``, set by the
    #: summary), or None
    files: object = None


def _class_ref(model, expr: ast.AST, ctx, site: _Site) -> Ref | None:
    """The project class ``expr`` holds an instance of (the model's ``instance_class``): a
    top-level class of this module, or one its imports name (with ``classes``, ``Ref ->
    Ref | None``, what the light index says the name builds: a class, or the class a
    builder function such as ``build_model()`` returns)."""
    got = model.instance_class(expr, ctx)
    if got is None:
        return _factory_ref(model, expr, ctx, site)
    if got[0] == "local":
        cls = got[1]
        return (site.path, cls.name) if site.path and cls.ctx.func is None and cls.ctx.scope.kind == "module" else None
    target = site.resolve(got[1])
    if target is None or "." in target[1]:
        return None
    if site.classes is None:
        return target
    return site.classes(target) or _factory_ref(model, expr, ctx, site)  # get_strategy("xla")


def _factory_ref(model, expr: ast.AST, ctx, site: _Site) -> Ref | None:
    """The project class a call of another module's factory builds for the constants it is
    given (``strategy = get_strategy("xla", grad_clip=1.0)``: the ``name == "xla"``
    branch's ``XLAStrategy``, :func:`~.defs.factory_class`), for ``expr`` the call or a
    name bound to it alone; else ``None``."""
    from .defs import factory_class  # (defs reads summaries' helpers: imported when used)

    call = expr
    if type(expr) in (ast.Name, ast.Attribute):
        single = model.single_value(expr, ctx)
        if single is None:
            return None
        call, ctx = single
    if type(call) is not ast.Call or site.files is None:
        return None
    parts = chain_parts(call.func)
    target = site.resolve(parts) if parts is not None else None
    if target is None or "." in target[1]:
        return None
    args, kwargs = model.literal_arguments(call, ctx)
    return factory_class(target, args, kwargs, site.files)


def _instances(model, expr: ast.AST, ctx, site: _Site) -> ArgFacts | None:
    """:data:`INSTANCE` for ``self`` in a method of a top-level class or an instance of a
    project class; :data:`INSTANCES` for a list or tuple display (or a name whose one value
    is one) every element of which is such an instance; ``None`` otherwise."""
    t = type(expr)
    func = ctx.func
    if t is ast.Name and func is not None and func.cls is not None and func.params and expr.id == func.params[0]:
        cls = func.cls
        bindings = model.read_bindings(expr, ctx)
        if site.path and cls.ctx.func is None and cls.ctx.scope.kind == "module" and bindings \
                and all(kind == "param" for _, kind, _, _ in bindings):
            return ArgFacts(INSTANCE, refs=((site.path, cls.name),))
        return None
    if t in (ast.Name, ast.Attribute, ast.Call):
        ref = _class_ref(model, expr, ctx, site)
        if ref is not None:  # name "device": the instance (a module) is visibly on the XLA device
            return ArgFacts(INSTANCE, "device" if model._on_device(expr, ctx, 0) else "", refs=(ref,))
    built = _built_from_classes(model, expr, ctx, site)
    if built is not None:
        return ArgFacts(INSTANCES, refs=built)
    elements = _elements(model, expr, ctx)
    if not elements:
        return None
    refs: list[Ref] = []
    for elt, ectx in elements:
        ref = _class_ref(model, elt, ectx, site) if type(elt) is not ast.Starred else None
        if ref is None:
            return None
        if ref not in refs:
            refs.append(ref)
    return ArgFacts(INSTANCES, refs=tuple(refs))


def _built_from_classes(model, expr: ast.AST, ctx, site: _Site) -> tuple[Ref, ...] | None:
    """The classes of ``[cls() for cls in PLUGINS]`` (a list comprehension, or a name bound
    once to one, building an instance of each class of a tuple or list of classes: a display,
    or a module-level one of another project module, :func:`~.defs.class_tuple`); else
    ``None``."""
    if type(expr) is ast.Name:
        single = model.single_value(expr, ctx)
        if single is None or type(single[0]) is not ast.ListComp:
            return None
        expr, ctx = single
    if type(expr) is not ast.ListComp or len(expr.generators) != 1 or site.files is None:
        return None
    gen = expr.generators[0]
    elt = expr.elt
    if gen.ifs or gen.is_async or type(gen.target) is not ast.Name or type(elt) is not ast.Call \
            or type(elt.func) is not ast.Name or elt.func.id != gen.target.id:
        return None
    it = gen.iter
    if type(it) in (ast.Tuple, ast.List):
        refs = []
        for e in it.elts:
            parts = chain_parts(e)
            target = site.resolve(parts) if parts is not None else None
            if target is None or "." in target[1]:
                return None
            refs.append(target)
        return tuple(refs)
    parts = chain_parts(it)
    target = site.resolve(parts) if parts is not None else None
    if target is None:
        return None
    from .defs import class_tuple  # (defs reads summaries' helpers: imported when used)

    return class_tuple(target, site.files)


def _elements(model, expr: ast.AST, ctx, depth: int = 0) -> list | None:
    """``(element, ctx)`` of the list or tuple ``expr`` holds: a display, a name bound once
    to one (with what ``name.append(x)`` adds in the same scope), or what a function of the
    module returns (``build_callbacks(verbose)``); ``None`` when unknown."""
    if depth > 4:
        return None
    t = type(expr)
    if t in (ast.List, ast.Tuple):
        return [(e, ctx) for e in expr.elts] or None
    if t is ast.Call:
        funcs = model.function_of(expr.func, ctx)
        if len(funcs) != 1 or not funcs[0].returns or any(v is None for v, _ in funcs[0].returns):
            return None
        out = []
        for v, vctx in funcs[0].returns:
            got = _elements(model, v, vctx, depth + 1)
            if got is None:
                return None
            out.extend(got)
        return out
    if t not in (ast.Name, ast.Attribute):
        return None
    values = model.values(expr, ctx)
    if not values or len(values) != 1 or values[0][1] is None or type(values[0][0]) not in (ast.List, ast.Tuple):
        return None
    out = [(e, values[0][1]) for e in values[0][0].elts]
    if t is ast.Name:
        for call, cctx in model.method_calls("append"):
            f = call.func
            if type(f.value) is ast.Name and f.value.id == expr.id and cctx.scope is ctx.scope and len(call.args) == 1:
                out.append((call.args[0], cctx))
    return out or None


def _step_context(model, ctx, xla_only: bool = True, line: int | None = None) -> tuple[bool, bool]:
    """(in the step, under a step gate) for code at ``ctx``: inside a training step loop of
    XLA code (an enclosing loop of its own function, :meth:`is_inner_step_loop`; with
    ``xla_only`` false, of any code: whether it runs as XLA code is settled elsewhere), and
    under an ``if step % N == 0:`` inside that loop. Code at ``line`` that runs on one pass
    only, or after the pass's sync, is not in the step (:func:`_not_every_pass`)."""
    loops = ctx.loops
    step = next((i for i, lp in enumerate(loops)
                 if model.is_inner_step_loop(lp) and (not xla_only or model.in_xla_code(lp.ctx))), None)
    if step is None or (line is not None and _not_every_pass(model, ctx, loops[step], line)):
        return False, False
    return True, _gated(model, ctx, loops[step])


def _not_every_pass(model, ctx, loop, line: int) -> bool:
    """Code at ``ctx`` (on ``line``) inside ``loop`` does not run as part of every pass's
    step: under an ``if`` that holds on one pass only (``if step == 0:`` on the loop's own
    counter, the model's ``_once_test``), or after a sync statement of the loop's own body
    earlier in the pass (``torch_xla.sync()`` then ``self.after_step(step)``: what follows
    reads a finished graph, as the step walk leaves out; not a ``barrier=True`` that XLA204
    drops, :meth:`redundant_barrier`). Bounded by the frames between
    the code and the loop, and the loop's own calls."""
    link = ctx.frames or None
    base = loop.ctx.frames or None
    while link is not None and link is not base:
        frame = link.frame
        if type(frame) is tuple and len(frame) == 2 and not isinstance(frame[0], ast.pattern) and frame[1] \
                and model._once_test(frame[0], ctx, loop.node):
            return True
        link = link.parent
    return any(call.lineno < line and cx.loops and cx.loops[-1] is loop and cx.frames is loop.ctx.frames
               and model.is_sync_call(call, cx) and not model.redundant_barrier(call, cx) for call, cx in loop.own)


def _gated(model, ctx, loop=None) -> bool:
    """Code at ``ctx`` runs under an ``if step % N == 0:`` inside ``loop`` (``None``: anywhere
    in its own function: the handler's ``if self.count % 100 == 0:`` around its loop over
    the callbacks)."""
    link = ctx.frames or None
    base = (loop.ctx.frames or None) if loop is not None else None
    while link is not None and link is not base:
        frame = link.frame
        if type(frame) is tuple and len(frame) == 2 and not isinstance(frame[0], ast.pattern):
            polarity = model._gate_polarity(frame[0], ctx)
            if (polarity > 0 and frame[1]) or (polarity < 0 and not frame[1]):
                return True
        link = link.parent
    return False


def describe_dispatches(model, resolve, path: str, classes=None) -> tuple[DispatchFacts, ...]:
    """The module's method calls on objects its functions' parameters bring in
    (:class:`DispatchFacts`, the model's ``receiver_origin``), with what each passes and
    whether it runs in a training step loop of its function (:func:`_step_context`). Linear
    in the module's calls."""
    quals = None
    found = []
    for call, ctx in model.calls:
        f = call.func
        if ctx.func is None:
            continue
        named = _getattr_param(model, call, ctx)
        if named is not None:  # getattr(cb, event)(*args): the method its callers name
            receiver = named[0]
        elif type(f) is ast.Name:  # model(x) on a module a parameter brought in: its forward
            receiver = f
        elif type(f) is ast.Attribute and type(f.value) is ast.Name and f.value.id == "self" \
                and ctx.func.cls is not None and f.attr not in ctx.func.cls.methods:
            receiver = f  # self.model(x) on a module __init__ received: its forward
        elif type(f) is ast.Attribute and type(f.value) in (ast.Name, ast.Attribute):
            receiver = f.value
            if type(receiver) is ast.Name and receiver.id in ("self", "cls", "super"):
                continue
        else:
            continue
        if named is None and model.qualname(f, ctx) is not None:
            continue
        origin = model.receiver_origin(receiver, ctx)
        if origin is None or origin[0].scope is None:
            continue
        quals = quals or model.function_quals()
        qual = quals.get(id(origin[0]))
        if qual is None:
            continue
        found.append((call, ctx, qual, origin, receiver, named))
    if not found:
        return ()
    site = _Site(resolve, path, classes, getattr(classes, "files", None))
    out = []
    for call, ctx, qual, (func, param, element), receiver, named in found:
        args, kwargs, splat = _describe_arguments(model, call, ctx, site)
        params = func.params + [a.arg for a in func.node.args.kwonlyargs]
        own_call = named is None and receiver is call.func  # model(x) / self.model(x): the object itself is called
        method = "" if named is not None else "__call__" if own_call else call.func.attr
        # a module without torch_xla (a framework's trainer): its loop is XLA code where a
        # launching module hands it the objects (the dispatch index reads only those)
        in_step, gated = _step_context(model, ctx, xla_only=model.uses_torch_xla, line=call.lineno)
        if not in_step:  # (a step its callers run: gated here if a gate of its own function holds it)
            gated = _gated(model, ctx)
        classes = () if named is not None or element or own_call or not model.project_launcher_selves \
            else model.receiver_classes(call.func.value, ctx) or ()
        own = [lp for lp in ctx.loops if lp.ctx.func is ctx.func]
        out.append(DispatchFacts(qual, param, params.index(param), element, method, call.lineno,
                                 tuple(args), tuple(kwargs), splat, in_step, gated, tuple(classes),
                                 caller=quals.get(id(ctx.func), ""),
                                 method_param=named[1] if named is not None else "",
                                 forwards=bool(named is not None and _forwards(call, ctx)),
                                 loops=tuple(lp.node.lineno for lp in own)))
    return tuple(out)


def describe_receiver_calls(model, calls: list, resolve, path: str, classes=None) -> tuple[DispatchFacts, ...]:
    """:class:`DispatchFacts` of the method calls on attribute chains whose receiver the
    reach evaluates (``trainer.strategy.optimizer_step(optimizer)``,
    ``cb.on_train_batch_end(...)`` over ``trainer.callbacks``; ``calls``: ``(call, ctx,
    edge key)`` from :func:`.summary._edges`): ``origin`` ``""``, ``param`` the edge key
    (``"recv:trainer.strategy.optimizer_step"``), with what each passes and whether it runs
    in a training step loop, so that the methods the reach resolves them to know their
    calls as dispatched ones (:func:`flake8_xla.project._dispatched_to`)."""
    if not calls:
        return ()
    quals = model.function_quals()
    site = _Site(resolve, path, classes, getattr(classes, "files", None))
    out = []
    origins = model.step_loader_origins(any_code=True)
    via = _fed_arguments(model, []) if origins else {}  # (what the step loops' origin calls receive)
    for call, ctx, key in calls:
        args, kwargs, splat = _describe_arguments(model, call, ctx, site)
        in_step, gated = _step_context(model, ctx, xla_only=model.uses_torch_xla, line=call.lineno)
        if not in_step:
            gated = _gated(model, ctx)
        own = [lp for lp in ctx.loops if lp.ctx.func is ctx.func]
        method = call.func.attr if type(call.func) is ast.Attribute else "__call__"  # model(x)
        out.append(DispatchFacts("", key, -1, False, method, call.lineno, tuple(args), tuple(kwargs), splat,
                                 in_step, gated, caller=quals.get(id(ctx.func), ""),
                                 loops=tuple(lp.node.lineno for lp in own),
                                 feeds_step=id(call) in origins, feeds_via=via.get(id(call), ())))
    return tuple(out)


def _getattr_param(model, call: ast.Call, ctx) -> tuple | None:
    """``(receiver, param)`` when ``call`` calls ``getattr(receiver, param)`` (or a name bound
    once to it: ``hook = getattr(cb, event, None)``; ``hook(trainer)``) with ``param`` a
    parameter of the calling function that nothing rebinds; else ``None``."""
    f = call.func
    if type(f) is ast.Name:
        single = model.single_value(f, ctx)
        if single is None or single[1] is None or single[1].func is not ctx.func:
            return None
        f = single[0]
    if type(f) is not ast.Call or type(f.func) is not ast.Name or f.func.id != "getattr" \
            or model.lookup("getattr", ctx, None) is not None or len(f.args) < 2 \
            or type(f.args[1]) is not ast.Name or type(f.args[0]) not in (ast.Name, ast.Attribute):
        return None
    name = f.args[1]
    bindings = model.read_bindings(name, ctx)
    if not bindings or any(kind != "param" or target is not ctx.func for _, kind, target, _ in bindings):
        return None
    return f.args[0], name.id


def _forwards(call: ast.Call, ctx) -> bool:
    """``call``'s ``*x`` / ``**y`` splats are its function's own ``*args`` / ``**kwargs``."""
    node = ctx.func.node.args
    own = {node.vararg.arg if node.vararg else None, node.kwarg.arg if node.kwarg else None} - {None}
    splats = [a.value for a in call.args if type(a) is ast.Starred] + [k.value for k in call.keywords if k.arg is None]
    return bool(splats) and all(type(v) is ast.Name and v.id in own for v in splats)


def _to_host(call) -> bool:
    """``x.cpu()`` or ``x.to("cpu")`` / ``x.to(torch.device("cpu"))`` (a literal CPU device)."""
    f = call.func
    if type(f) is not ast.Attribute:
        return False
    if f.attr == "cpu" and not call.args:
        return True
    if f.attr != "to" or len(call.args) != 1:
        return False
    a = call.args[0]
    if type(a) is ast.Call and type(a.func) is ast.Attribute and a.func.attr == "device" and len(a.args) == 1:
        a = a.args[0]
    return type(a) is ast.Constant and a.value == "cpu"


def _host_copy(model, expr: ast.AST, ctx) -> bool:
    """The argument is visibly a copy on the host: a ``.cpu()`` / ``.to("cpu")`` call, or a
    name or attribute every value of which is one."""
    if type(expr) is ast.Call:
        return _to_host(expr)
    if type(expr) not in (ast.Name, ast.Attribute):
        return False
    values = model.resolve_values(expr, ctx)
    return bool(values) and all(type(v) is ast.Call and _to_host(v) for v, _ in values)
