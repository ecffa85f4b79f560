"""Plain, immutable summaries of project modules, built from each module's own model.

A summary holds facts and file paths, never a tree or a model: :func:`summarise` builds
the module's :class:`~flake8_xla.model.Model`, copies out what other modules ask, and
releases the model.
"""

from __future__ import annotations

import ast
import collections
import dataclasses
import warnings
from pathlib import Path

from ..model.reductions import OPTIMIZER_STEP, reduces_directly  # what XLA201 counts as a reduction
from ..model.runtime import chain_parts, is_xla_device

#: the saves whose writers XLA602 asks about (``xm.save``, ``xser.save``)
SAVE_CALLS = ("torch_xla.core.xla_model.save", "torch_xla.utils.serialization.save")
from ..model.scopes import Ctx
from . import constants
from ..settings import Settings
from .callers import CallFacts, DispatchFacts, describe_calls, describe_dispatches, describe_receiver_calls, \
    describe_self_sites
from .files import ProjectFiles, read_text

#: a reference to a function or class of a project module: (file, "f" / "Cls" / "Cls.m")
Ref = tuple[str, str]


@dataclasses.dataclass(frozen=True)
class FunctionFacts:
    """One function of a module.

    Attributes:
        qual: ``f``, ``Cls.m``, or ``outer.inner`` for a nested def.
        line: the line of its ``def``.
        calls_local: quals of the module's functions it calls or names (the model's callees).
        calls_out: functions and classes of other project modules it calls or names, and the
            classes whose instances its calls hand to other project modules (their methods
            run where the instance goes: ``train_fn(loader, model)`` with ``model`` built by
            ``build_model()``), and ``(file, "Cls.m")`` for ``backend.m(...)`` on a parameter
            a launch wrapper's ``self`` fills (``Model.receiver_classes``: ``Cls.m`` runs,
            its own or inherited).
        xla_calls: the torch_xla functions it calls itself (canonical dotted names).
        may_sync: it may cut the graph itself: a sync (``torch_xla.sync()``,
            ``barrier=True``) or a call that may hide one (a third-party helper, ``next()``
            of an unseen iterator); calls of project functions are their own facts.
        yields_seen: what it returns or yields is visibly no loader (host tensors, numbers,
            ``range``): the model's ``iterable_seen`` of every return and yield.
        steps: it, or a function of its module it calls, runs backward or an optimizer step.
        updates: ... an optimizer update (``opt.step()``, ``xm.optimizer_step``).
        syncs: ... cuts the graph (``torch_xla.sync()``, ``barrier=True``, a compiled step).
        param_syncs: ``(index, name)`` of the parameters it calls ``.mark_step()`` or
            ``.optimizer_step(..., barrier=True)`` on: it syncs when a caller passes the
            ``xm`` module there (``train_fn(loader, model, xm)``); plain functions only.
        local_master: it returns the local-master test (``return xm.is_master_ordinal()``).
        saves: how its own ``xm.save`` / ``xser.save`` calls pick their writers: ``"default"``
            (``master_only`` left out or ``True``, no ``global_master``), ``"global"``
            (``global_master=True``), ``"chosen"`` (``master_only`` anything else).
        master: the master its one ``return`` tests (``"local"`` / ``"global"``, the
            model's ``master_scope``: ``return xr.global_ordinal() == 0``), or ``""``.
        moves_param: ``(index, where)`` when every ``return`` gives back its parameter at
            ``index`` of the ``def`` (``self`` counts) moved to a device: ``where`` ``"xla"``
            (``return model.to(torch_xla.device())``) or ``"self.m"`` for the device a method
            of its own class returns (``return model.to(self.device())``: which ``m`` runs
            depends on the instance's class, :func:`flake8_xla.project.helper_facts`).
        returns_device: every ``return`` gives the XLA device (``return xm.xla_device()``).
    """

    qual: str
    line: int
    calls_local: tuple[str, ...]
    calls_out: tuple[Ref, ...]
    xla_calls: tuple[str, ...] = ()
    may_sync: bool = True
    yields_seen: bool = False
    steps: bool = False
    updates: bool = False
    syncs: bool = False
    param_syncs: tuple[tuple[int, str], ...] = ()
    local_master: bool = False
    saves: tuple[str, ...] = ()
    master: str = ""
    moves_param: tuple[int, str] | tuple[()] = ()
    returns_device: bool = False
    steps_once: bool = False  # the backward and an update once per call, in no loop of its own
    returns_loader: str = ""  # "plain" / "device": every return is that loader kind (the model's loader_kind)
    #: ``"ddp"`` / ``"fsdp"``: every return gives a module wrapped by that kind
    #: (``return FSDP(model.to(device))``, through names; the model's ``returned_wrap``)
    returns_wrap: str = ""
    #: the method names its own ``self.m(...)`` calls name (a method's first parameter; what
    #: runs depends on the class of the object: :func:`flake8_xla.project._reached_from`)
    self_calls: tuple[str, ...] = ()
    #: the quals of this module that those calls resolve to in the module alone (the class's
    #: own or inherited method and the module's subclasses' overrides), and no other call
    self_local: tuple[str, ...] = ()
    #: the ``self.<attr>`` optimizers its own ``xm.optimizer_step(self.<attr>)`` calls update
    self_steps: tuple[str, ...] = ()
    #: its parameters, in order (``self`` counts)
    params: tuple[str, ...] = ()
    #: ``(callee, ((guard, passes), ...))`` for the callees (a local qual or a ``Ref``) of
    #: ``calls_local`` / ``calls_out`` whose every occurrence is a call or name read seen
    #: here, with what each occurrence needs to run and the constants it passes
    #: (:mod:`.constants`); a callee not listed runs whenever the function does
    edges: tuple = ()
    #: the ``calls_out`` refs it names without building an instance (``isinstance(x, Base)``,
    #: ``Base.m(self)``): what runs there runs on an object of unknown class
    unbuilt: tuple[Ref, ...] = ()
    #: the method names its own ``super().m(...)`` calls name
    super_calls: tuple[str, ...] = ()
    #: its own ``self.m(...)`` calls inside its loops (:class:`~.callers.SelfSite`): the
    #: override that runs, and whether the loop is the training step, depend on the class
    self_sites: tuple = ()
    #: the index (``self`` counts) of the parameter every ``return`` gives back, maybe in a
    #: device loader (``return pl.MpDeviceLoader(loader, dev)``; the model's
    #: ``passed_loader_param``); -1 when none
    passes_loader: int = -1
    #: the indexes (``self`` counts) of the parameters whose value a training step loop of
    #: the module draws its batches from (the model's ``step_loader_params``: a loader handed
    #: to ``TrainLoop(...)`` and iterated as ``self.train_loader`` in its loop)
    fed_params: tuple[int, ...] = ()
    #: ``"whole"`` / ``"distributed"``: every ``return`` gives a sampler of that kind
    #: (``return RandomSampler(ds)``; the model's ``sampler_value_kind``)
    returns_sampler: str = ""
    #: what its own code does to a service every host shares (``gsutil cp`` to a bucket, a
    #: tracker's ``wandb.log``; XLA604's ``shared_effect``), named, or ``""``
    shared_effect: str = ""
    #: the indexes (``self`` counts) of the parameters a ``for`` loop of the module iterates
    #: (the model's ``iterated_params``: a per-epoch function iterating the loader it is handed)
    iterated_params: tuple[int, ...] = ()
    #: a loop of its own runs the backward or an optimizer step (the model's
    #: ``is_inner_step_loop``): a loop that calls it is an epoch loop, not the step loop
    holds_step_loop: bool = False
    #: ``(callee, multi, passes, splat)`` of each launch its own code makes
    #: (``torch_xla.launch(_run_fit, args=(self, module))`` in a trainer's method): the callee
    #: (a local qual, a ``Ref``, or ``("", name)`` for a parameter holding the function:
    #: ``torch_xla.launch(fn, args=args)``), a multi-process launch, what ``args=(...)``
    #: passes (:func:`.constants.passes` form, positions of the launched function after its
    #: process index), and the name ``args=`` gives when it is a name (the ``*args`` tuple)
    launches: tuple = ()
    #: the name of its ``*args`` parameter, or ``""``
    varargs: str = ""
    #: the index (``self`` counts) of the parameter every ``return`` gives back as the same
    #: object (``return module.to(self.root_device)``, ``.train()``, a name bound once to it:
    #: :func:`_returned_param`); -1 when none
    returns_param: int = -1
    #: ``((guard, value), ...)`` of its ``return`` statements, in order, when one of them
    #: builds an object of a project class (``if cfg.device == "tpu": return TpuEnv(cfg)``:
    #: a factory) and the value of each is told (:func:`.constants.passes` argument form);
    #: ``()`` otherwise
    returns_alts: tuple = ()
    #: the value of each position of the tuple every ``return`` gives (``return model,
    #: optimizer, loader``: :func:`_returns_items`), ``()`` otherwise
    returns_items: tuple = ()
    #: the indexes (``self`` counts) of the parameters its own code moves to the XLA device
    #: whenever it runs (``self.model = model.to(self.device)`` in ``__init__``, the device
    #: ``torch_xla.device()``): ``nn.Module.to`` moves the caller's module in place
    #: (:func:`_moved_in_place`)
    moved_in_place: tuple[int, ...] = ()
    #: the indexes (``self`` counts) of the parameters whose value a step loop of the module
    #: with no per-step sync iterates unwrapped (the model's ``loader_params``: a plain
    #: ``DataLoader`` handed in grows the graph; XLA301 at the caller's argument)
    unsynced_params: tuple[int, ...] = ()
    #: the ``calls_local`` quals and ``calls_out`` refs it only names, never calls
    #: (``functools.partial(worker, cfg)``, ``callbacks=[f]``, ``return f``): they run where
    #: the value is called, not when this function runs (:func:`_named_only`)
    named_only: tuple = ()


@dataclasses.dataclass(frozen=True)
class ClassFacts:
    """One class: its methods (own, by name), its bases in the project, whether it is a
    map-style ``Dataset`` with no sharding of its own (the model's ``_plain_dataset_class``),
    whether its own methods use dropout with a rate visibly above zero (the model's
    ``class_dropout``: random numbers drawn where the module runs), and the names its body
    binds by assignment (``on_step_end = Callback.on_step_end``: they hide a base's method),
    and the ``self.<attr>`` its own methods set to a device tensor somewhere in XLA code
    (``self.last_loss = loss.detach()``: the model's ``tensor_kind``)."""

    name: str
    methods: tuple[str, ...]
    bases_local: tuple[str, ...]
    bases_out: tuple[Ref, ...]
    plain_dataset: bool = False
    dropout: bool = False
    assigned: tuple[str, ...] = ()
    device_attrs: tuple[str, ...] = ()
    #: its bases in the order its ``class`` line names them: ``("", name)`` for a class of the
    #: module, a ``Ref`` for another module's (a mixin listed first overrides the base after it)
    bases_order: tuple = ()
    #: ``(attr, value)`` for each ``self.<attr>`` its own methods store: the one value its
    #: ``__init__`` stores there unconditionally, in :func:`.constants.passes` argument form
    #: (``self.launcher = XLALauncher(self)``: ``("new", ref, passes)``; ``self.strategy =
    #: strategy or CPUStrategy()``: ``("or", (("chain", "strategy"), ("new", ...)))``), or the
    #: values its branches store (``("alts", ((guard, value), ...))``: :func:`_attr_values`),
    #: evaluated in the context of the object's constructor call; ``None`` when stored
    #: otherwise (in another method, in a loop, under a test of no constant, a value not told)
    attr_values: tuple = ()


@dataclasses.dataclass(frozen=True)
class LaunchSetup:
    """What a launching module sets up for all the code its launch runs (program-wide facts
    that keep some rules silent in one file); in project mode, a module whose functions
    that launch reaches is linted with them (:attr:`flake8_xla.project.ProjectFacts.setup`).

    Attributes:
        reduces: something reduces the gradients: DDP, XLA FSDP / FSDPv2, ZeRO-1, SPMD, a
            training framework, an unseen wrapper (the model's ``reduces_gradients_elsewhere``),
            or a gradient reduction (``xm.reduce_gradients``, an all-reduce of grads) in its
            launched code.
        process_group: it may initialise the default process group
            (``dist.init_process_group``; the model's ``process_group_possible``).
        spmd: it uses SPMD (the model's ``uses_spmd``).
        framework: it uses a training framework (the model's ``uses_framework``).
        device_random: its launched code trains and builds, in another project module, a
            class whose methods use dropout (``ClassFacts.dropout``): random numbers drawn
            on the device (set when the reach is computed, not by the module's own model).
        device_seeded: its own code seeds the device generator (``torch_xla.manual_seed``,
            ``xm.set_rng_state``): a helper's ``torch.manual_seed`` is then not the only seed.
    """

    reduces: bool = False
    process_group: bool = False
    spmd: bool = False
    framework: bool = False
    device_random: bool = False
    device_seeded: bool = False

    def union(self, other: "LaunchSetup") -> "LaunchSetup":
        """Either's facts (any launching module that sets something up keeps the rules silent;
        device randomness counts where a launching module that has it does not seed it)."""
        return LaunchSetup(self.reduces or other.reduces, self.process_group or other.process_group,
                           self.spmd or other.spmd, self.framework or other.framework,
                           (self.device_random and not self.device_seeded) or (other.device_random and not other.device_seeded),
                           self.device_seeded and other.device_seeded)


@dataclasses.dataclass(frozen=True)
class ModuleSummary:
    """What other modules of the project may ask about one module.

    Attributes:
        path: the module's file.
        uses_torch_xla: the module imports (and uses) torch_xla.
        functions: every function (methods and nested defs too).
        classes: every class.
        exports: names its imports bind to project functions or classes (re-exports):
            ``(name, file, qual)``.
        launched_multi: quals of its functions a multi-process launch of the module runs.
        launched_single: quals a single-process launch runs (and not a multi-process one).
        calls_into: its calls of (and non-call references to) functions of other project
            modules, with what each argument is (:class:`~.callers.CallFacts`).
        setup: what it sets up for the code it launches (:class:`LaunchSetup`), or for the
            code its module level runs (a script); ``None`` when it does neither.
        script_roots: for a torch_xla script that launches nothing (a single-device or SPMD
            script): the quals of its functions that its module-level code (the ``__main__``
            block) runs in XLA code, directly or through the module's calls.
        script_out: the functions and classes of other project modules its module-level
            XLA code calls.
        dispatches: its method calls on objects a parameter of its functions brings in
            (``cb.on_step_end(self, step, loss)`` over ``self.callbacks``), with what each
            passes and whether it runs in the training step (:class:`~.callers.DispatchFacts`).
    """

    path: str
    uses_torch_xla: bool
    functions: tuple[FunctionFacts, ...]
    classes: tuple[ClassFacts, ...]
    exports: tuple[tuple[str, str, str], ...]
    launched_multi: tuple[str, ...]
    launched_single: tuple[str, ...]
    calls_into: tuple[CallFacts, ...] = ()
    setup: LaunchSetup | None = None
    script_roots: tuple[str, ...] = ()
    script_out: tuple[Ref, ...] = ()
    dispatches: tuple[DispatchFacts, ...] = ()
    #: ``(qual, context)`` of each launch of one of its functions: what the launch site
    #: knows of the launched function's parameters (:mod:`.constants`; ``()``: nothing)
    launch_contexts: tuple = ()
    #: ``(ref, multi, passes)`` of each function of another project module that it launches
    #: (``xmp.spawn(main_worker)`` after ``from vitpod.engine import main_worker``): the
    #: launched code starts there (``multi``: a multi-process launch), with the literal
    #: constants its ``args=(...)`` passes (:func:`.constants.passes` form, positions after
    #: the process index: ``torch_xla.launch(train_worker, args=("tpu",))``)
    launched_out: tuple = ()
    #: for a module that does not use torch_xla whose module-level code calls something of
    #: the project: ``("<module>",)``, that code as a function (:attr:`entry`; the
    #: ``__main__`` block of a script that starts a framework whose own method launches XLA code)
    entry_roots: tuple[str, ...] = ()
    #: the module-level code of such a module as one function (qual ``"<module>"``: its
    #: calls, with what each passes), or ``None``
    entry: FunctionFacts | None = None
    #: ``(name, ((key, ref), ...))`` of each module-level registry: a name bound once to a
    #: dict or list display (``MODELS = {}``, ``{"resnet": build_resnet}``) with the project
    #: functions and classes it holds, from the display and from stores anywhere in the
    #: module (``MODELS[name] = cls``, ``.append(f)``, ``.setdefault(k, f)``); ``key`` the
    #: literal key (``None``: not a literal) (:func:`_registries`)
    registries: tuple = ()
    #: ``(qual, name)``: module-level function ``qual`` stores its own or a nested def's
    #: parameter into registry ``name`` (``def register_model(name): def deco(cls):
    #: MODELS[name] = cls``): what it decorates is in the registry
    registrars: tuple = ()
    #: ``(qual, decorator ref, key)`` of each module-level function or class under a
    #: decorator of the project (``@register_model("tiny_gpt")``), the decorator's first
    #: literal argument as ``key`` (``None`` without one)
    decorated: tuple = ()

    def function(self, qual: str) -> FunctionFacts | None:
        return self._index()[0].get(qual)

    def cls(self, name: str) -> ClassFacts | None:
        return self._index()[1].get(name)

    def export(self, name: str) -> Ref | None:
        return self._index()[2].get(name)

    def _index(self):
        found = self.__dict__.get("_idx")
        if found is None:
            found = ({f.qual: f for f in self.functions}, {c.name: c for c in self.classes},
                     {n: (p, q) for n, p, q in self.exports})
            if self.entry is not None:
                found[0][self.entry.qual] = self.entry
            object.__setattr__(self, "_idx", found)
        return found


#: ``[str path, text, tree]`` of the module the engine lints now (:func:`hold_tree`)
_HELD: list = [None, None, None]


def hold_tree(path: Path | None, text: str | None = None, tree: ast.Module | None = None) -> None:
    """Lend :func:`parse_module` the host's tree of the module being linted (its resolved
    ``path``, the ``text`` the host parsed): while it lints, a summary of that very module
    (the reach index, a caller's question) reuses the tree instead of parsing the file
    again, when the file's text is that text (an unsaved editor buffer is not). ``None``
    ends the loan. Nothing reads or changes a tree in place, so the two models may share it."""
    _HELD[:] = [str(path), text, tree] if path is not None and type(tree) is ast.Module else [None, None, None]


def parse_module(path: Path) -> ast.Module | None:
    """The module's tree, or ``None`` when it cannot be read or parsed (it is then unknown)."""
    text = read_text(path)
    if text is None:
        return None
    held = _HELD
    if held[0] is not None and held[0] == str(path) and held[1] == text:
        return held[2]  # (the host's tree of this text: the same ast.parse)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def summarise(path: Path, files: ProjectFiles, settings: Settings, def_facts=None,
              launcher_selves: tuple = ()) -> ModuleSummary | None:
    """Build the summary of the module at ``path``; ``None`` when it does not parse.
    ``def_facts``: ``Ref -> DefFacts`` (:func:`.defs.def_facts`), what the light index says
    of a project class or function, so that ``TinyLlama(cfg)`` of another module is a model.
    ``launcher_selves``: the launch wrappers that hand their own ``self`` on
    (:attr:`flake8_xla.project.ProjectFacts.launcher_selves`), so that a launched function's
    parameter holding it is known (``backend.m()`` calls reach ``Cls.m``)."""
    from ..model import Model  # the model does not import the project layer

    tree = parse_module(path)
    if tree is None:
        return None
    bindings = _import_bindings(path, tree, files)

    def lookup(parts):
        r = resolve_chain(parts, bindings, files)
        return def_facts(r) if r is not None else None

    model = Model(tree, settings, project_defs=lookup if def_facts is not None and bindings else None,
                  project_launcher_selves=launcher_selves)
    try:
        return _summary(path, model, files, bindings)
    finally:
        model.release()


def _named_only(model, func, quals: dict, local: list, out: list, bindings: dict, ref) -> tuple:
    """The callees of ``func`` (``local`` quals, ``out`` refs) that it only names: a plain
    function of the module, or a name its imports bind, loaded in ``func`` but never the
    function of one of its calls nor the root of a called chain (``partial(_worker, lr)``
    builds a value; ``_worker`` runs where that value is called; so does a nested def the
    function returns). Methods (``self.m()``, ``obj.m()``) and what a constructor runs are
    calls."""
    called: set[str] = set()
    for call, _ in func.calls:
        f = call.func
        while type(f) is ast.Attribute:
            f = f.value
        if type(f) is ast.Name:
            called.add(f.id)
    names = set(func.names) - called
    if not names:
        return ()
    found: list = []
    if local:
        wanted = set(local)
        for f in model.callees(func):
            q = quals.get(id(f))
            if q in wanted and f.cls is None and f.name in names and q not in found:
                found.append(q)  # (also a nested def handed back: ``def build(): ...; return build``)
    for name in names:
        if name in bindings:
            r = ref(ast.Name(id=name))
            if r is not None and r in out and r not in found:
                found.append(r)
    return tuple(found)


def _summary(path: Path, model, files: ProjectFiles, bindings: dict) -> ModuleSummary:
    quals = model.function_quals()

    def ref(chain: ast.AST) -> Ref | None:
        return resolve_chain(chain_parts(chain), bindings, files)

    def resolver(parts):
        return resolve_chain(parts, bindings, files)

    from .defs import instance_class  # (defs reads summaries' helpers: imported when used)

    def classes(ref: Ref) -> Ref | None:
        return instance_class(ref, files)

    classes.files = files  # (the described calls read factories: callers._factory_ref)

    def new(expr: ast.AST, ctx, depth: int = 0):
        """The object value ``expr`` holds for the reach (:mod:`.constants`): ``("new",
        class ref, what its constructor call passes)`` when its one value is a constructor
        call of a project class, ``("news", items)`` for a list or tuple display of them
        (also through a name bound once), ``("either", items)`` for a name bound to one of
        several such calls (XLA-off branches' left out); else ``None``."""
        t = type(expr)
        if depth > 5:
            return None
        if t is ast.Name:
            for _, kind, target, _ in model.lookup(expr.id, ctx, None) or ():
                if kind == "def" and id(target) in quals and target.ctx.func is None and target.cls is None:
                    return ("fn", (str(path), quals[id(target)]))  # a function handed on (launch(_fit_worker, ...))
                if kind == "import":
                    r = ref(expr)
                    if r is not None and "." not in r[1] and classes(r) is None:
                        return ("fn", r)
                break
            values = model.values(expr, ctx)
            if values is None:  # model, opt, loader = accelerator.prepare(model, opt, loader)
                bindings = model.read_bindings(expr, ctx)
                if bindings and len(bindings) == 1 and bindings[0][1] == "item" and type(bindings[0][2]) is tuple \
                        and type(bindings[0][2][0]) is ast.Call and bindings[0][3] is not None \
                        and type(bindings[0][2][1]) is int:
                    got = new(bindings[0][2][0], bindings[0][3], depth + 1)
                    return ("nth", got, bindings[0][2][1]) if got is not None and got[0] == "ret" else None
                return None
            if not 1 <= len(values) <= 4 or any(c is None for _, c in values):
                return None
            if len(values) > 1:  # strategy = XLAStrategy(...) / else: strategy = CPUStrategy(): each object
                values = [(v, c) for v, c in values if not _own_frames_off(model, c)]  # (not an XLA-off branch's)
                items = tuple(dict.fromkeys(new(v, c, depth + 1) if type(v) is ast.Call else None for v, c in values))
                if not items or None in items or any(i[0] != "new" for i in items):
                    return None
                return items[0] if len(items) == 1 else ("either", items)
            v, c = values[0]
            return new(v, c, depth + 1) if type(v) in (ast.Call, ast.List, ast.Tuple) else None
        if t in (ast.List, ast.Tuple):
            items = [new(e, ctx, depth + 1) for e in expr.elts]
            return ("news", tuple(items)) if items and None not in items else None
        if t is ast.Attribute:  # self.module = self.strategy.setup_model(model); ... self.module
            stored = _stored_before(model, expr, ctx)
            return new(stored[0], stored[1], depth + 1) if stored is not None else None
        if t is not ast.Call or type(expr.func) not in (ast.Name, ast.Attribute, ast.Subscript, ast.Call):
            return None
        f = expr.func
        if type(f) in (ast.Name, ast.Subscript, ast.Call):
            got = looked_up(f, ctx, 0) if type(f) is not ast.Name or model.class_named(f.id, ctx) is None else None
            if got is not None:  # MODELS[name](cfg), cls = MODELS[name]; cls(cfg): what the registry holds
                return ("reg", got[0], got[1], constants.passes(model, expr, ctx, lambda e, c: new(e, c, depth + 1)))
        if type(f) is ast.Attribute and f.attr in model._SAME_MODULE and type(f.value) in (ast.Call, ast.Name) \
                and (files is None or not files.defines(f.attr)):
            return new(f.value, ctx, depth + 1)  # build_model(cfg).to(device): the module built
        if type(f) not in (ast.Name, ast.Attribute):
            return None
        cls = model.class_named(f.id, ctx) if type(f) is ast.Name else None
        if cls is not None:
            if cls.ctx.func is not None:
                return None
            target = (str(path), cls.name)
        else:
            r = ref(f)
            target = classes(r) if r is not None else None
            if target is None and type(f) is ast.Attribute and r is None and (files is None or files.defines(f.attr)):
                recv = _receiver(model, f.value, ctx, new, depth + 1)
                if recv is not None:  # self.strategy.setup_module(module): what that method returns
                    return ("ret", recv, f.attr, constants.passes(model, expr, ctx, lambda e, c: new(e, c, depth + 1)))
                return None
            if target is None and r is not None and "." not in r[1]:  # helper(model): what it returns
                return ("ret", None, r, constants.passes(model, expr, ctx, lambda e, c: new(e, c, depth + 1)))
            if target is None or target[1] != r[1].rsplit(".", 1)[-1]:
                return None  # (not a constructor call of the class itself, maybe re-exported)
        return ("new", target, constants.passes(model, expr, ctx,
                                                lambda e, c: new(e, c, depth + 1)))

    registries, registrars, decorated = _registries(model, ref, str(path))
    held = {name for name, _ in registries}

    def registry(expr: ast.AST) -> Ref | None:
        """The registry ``expr`` names: a module-level one of this module, or an imported name
        (a registry of another module, or nothing the project layer finds: unknown)."""
        if type(expr) is ast.Name and expr.id in held and expr.id not in bindings:
            return (str(path), expr.id)
        r = ref(expr) if type(expr) in (ast.Name, ast.Attribute) else None
        return r if r is not None and "." not in r[1] else None

    def looked_up(expr: ast.AST, ctx, depth: int):
        """``(registry ref, key)`` of ``REG[key]`` / ``REG.get(key)``, also through a name
        bound once to one (``cls = MODELS[name]``); ``None`` otherwise."""
        t = type(expr)
        if t is ast.Name and depth < 3:
            values = model.values(expr, ctx)
            if values and len(values) == 1 and values[0][1] is not None:
                return looked_up(values[0][0], values[0][1], depth + 1)
            return None
        if t is ast.Subscript:
            r, key = registry(expr.value), expr.slice
        elif t is ast.Call and type(expr.func) is ast.Attribute and expr.func.attr == "get" and expr.args:
            r, key = registry(expr.func.value), expr.args[0]
        else:
            return None
        if r is None:
            return None
        return r, constants._argument(model, key, ctx)  # ("const", v), ("chain", "name") or None

    new.looked_up = looked_up
    calls_into = describe_calls(model, resolver, bindings, str(path), classes)
    handed: dict[str, list[Ref]] = {}  # qual -> classes whose instances its calls hand on, forwards it runs
    for cf in calls_into:
        if not cf.caller:
            continue
        if not cf.escape and "." in cf.target[1] and not cf.launched:
            handed.setdefault(cf.caller, []).append(cf.target)  # model(x), obj.m() on an instance of a project class
        for a in list(cf.args) + [a for _, a in cf.kwargs]:
            if a.refs:
                handed.setdefault(cf.caller, []).extend(a.refs)

    functions = []
    recv_calls: list = []  # (call, ctx, edge key) of the method calls on attribute chains
    selves = bool(model.project_launcher_selves)
    launches = _function_launches(model, quals, ref, str(path), new, files,
                                  lambda parts: resolve_chain(parts, bindings, files))
    dispatches = describe_dispatches(model, resolver, str(path), classes)
    dispatch_sites = {(d.caller, d.line, d.method) for d in dispatches if d.method}
    for func in model.functions:
        local = [quals[id(f)] for f in model.callees(func) if id(f) in quals]
        out: list[Ref] = list(dict.fromkeys(r for r in handed.get(quals[id(func)], ()) if r[0] != str(path)))
        built: set = set()  # out refs this function constructs (a class called) or calls on a known receiver
        for call, cctx in func.calls:
            r = ref(call.func)
            if r is None and type(call.func) in (ast.Name, ast.Subscript, ast.Call):
                got = looked_up(call.func, cctx, 0) if held or bindings else None
                r = got[0] if got is not None else None  # TRAINERS[name](args): the registry's classes built
            if r is not None and "." not in r[1]:
                built.add(r)
            if r is not None and r not in out:
                out.append(r)
            elif r is None and selves and type(call.func) is ast.Attribute:
                # backend.m(...) on what a launch wrapper's self brought in: Cls.m runs
                for cls in model.receiver_classes(call.func.value, cctx) or ():
                    m = (cls[0], f"{cls[1]}.{call.func.attr}")
                    built.add(m)
                    if m not in out:
                        out.append(m)
            if r is None and type(call.func) is ast.Attribute:
                m = _inherited_call(model, call.func, cctx, str(path))
                if m is None and type(call.func.value) is ast.Call and (files is None or files.defines(call.func.attr)):
                    got = new(call.func.value, cctx)  # Trainer(XLAStrategy()).fit(Net()): on the object built
                    if got is not None and got[0] == "new":
                        m = (got[1][0], f"{got[1][1]}.{call.func.attr}")
                if m is not None:  # trainer.train() on the script's subclass of a framework class
                    built.add(m)
                    if m not in out:
                        out.append(m)
        for name in func.names:
            if name in bindings:
                r = ref(ast.Name(id=name))
                if r is not None and r not in out:
                    out.append(r)
            elif name in held and (str(path), name) not in out:
                out.append((str(path), name))  # MODELS[name](cfg): what the registry holds runs
                built.add((str(path), name))
        built.update(handed.get(quals[id(func)], ()))
        unbuilt = tuple(r for r in out if r not in built)
        fed = model.step_loader_params()
        unsynced = model.loader_params()
        iterated = model.iterated_params()
        holds = {id(lp.ctx.func) for lp in model.loops if lp.ctx.func is not None and model.is_inner_step_loop(lp)}
        self_calls, self_local, self_steps = _self_calls(model, func, quals)
        supers = _super_calls(func)
        edges = _edges(model, func, quals, ref, bindings, set(local), set(out),
                       set(handed.get(quals[id(func)], ())), new, dispatch_sites, files, recv_calls)
        functions.append(FunctionFacts(quals[id(func)], func.node.lineno, tuple(dict.fromkeys(local)), tuple(out),
                                       *_does(model, func, ref), steps_once=model.steps_once(func),
                                       returns_loader=_returns_loader(model, func),
                                       passes_loader=model.passed_loader_param(func) if func.returns else -1,
                                       fed_params=tuple(sorted(fed.get(id(func), ()))),
                                       returns_sampler=_returns_sampler(model, func),
                                       shared_effect=_shared_effect(model, func),
                                       iterated_params=tuple(sorted(iterated.get(id(func), ()))),
                                       holds_step_loop=id(func) in holds,
                                       returns_wrap=model.returned_wrap(func), self_calls=self_calls,
                                       self_local=self_local, self_steps=self_steps,
                                       params=tuple(func.params), edges=edges, unbuilt=unbuilt,
                                       super_calls=supers, launches=launches.get(id(func), ()),
                                       varargs=_varargs(func), returns_param=_returned_param(model, func),
                                       returns_alts=_returns_alts(model, func, new),
                                       returns_items=_returns_items(model, func, new),
                                       named_only=_named_only(model, func, quals, local, out, bindings, ref),
                                       moved_in_place=_moved_in_place(model, func),
                                       unsynced_params=tuple(sorted(func.params.index(n) for fid, n in unsynced
                                                                    if fid == id(func) and n in func.params)),
                                       self_sites=describe_self_sites(model, func, resolver, str(path), classes)))
    class_facts = []
    for cls in model.classes:
        local, out, order = [], [], []
        for base in cls.node.bases:
            if type(base) is ast.Name and model.class_named(base.id, cls.ctx) is not None:
                local.append(base.id)
                order.append(("", base.id))
            else:
                r = ref(base)
                if r is not None:
                    out.append(r)
                    order.append(r)
        assigned = tuple(t.id for stmt in cls.node.body if type(stmt) in (ast.Assign, ast.AnnAssign)
                         for t in (stmt.targets if type(stmt) is ast.Assign else [stmt.target]) if type(t) is ast.Name)
        class_facts.append(ClassFacts(cls.name, tuple(cls.methods), tuple(local), tuple(out),
                                  model.plain_dataset_class(cls), model.class_dropout(cls), assigned,
                                  model.device_attrs(cls), tuple(order), _attr_values(model, cls, new)))
    exports = []
    for name in bindings:
        r = ref(ast.Name(id=name))
        if r is not None:
            exports.append((name, *r))
    multi = model.launched(multi_only=True)
    launched = model.launched()
    def ref_parts(parts):
        return resolve_chain(parts, bindings, files)

    launched_out = _launched_out(model, ref, str(path), files, ref_parts)
    roots, out = _script_roots(model, ref) if not launched and not launched_out and model.uses_torch_xla \
        else ((), ())
    # the module level as one function: a script without torch_xla's host code (entry_roots), and a
    # torch_xla script's module-level calls with what they pass (its script_out targets' contexts)
    entry = _module_facts(model, quals, ref, new) if not model.uses_torch_xla or out else None
    return ModuleSummary(
        path=str(path),
        uses_torch_xla=model.uses_torch_xla,
        functions=tuple(functions),
        classes=tuple(class_facts),
        exports=tuple(exports),
        launch_contexts=_launch_contexts(model, quals),
        launched_multi=tuple(quals[id(f)] for f in model.functions if id(f) in multi),
        launched_single=tuple(quals[id(f)] for f in model.functions if id(f) in launched and id(f) not in multi),
        calls_into=calls_into,
        setup=_setup(model) if launched or launched_out or roots or out else None,
        launched_out=launched_out,
        script_roots=tuple(quals[id(f)] for f in model.functions if id(f) in roots),
        script_out=out,
        entry_roots=(entry.qual,) if entry is not None and not model.uses_torch_xla else (),
        entry=entry,
        dispatches=dispatches + describe_receiver_calls(model, recv_calls, resolver, str(path), classes),
        registries=registries, registrars=registrars, decorated=decorated,
    )


_REGISTRY_CALLS = frozenset({"dict", "OrderedDict", "defaultdict"})


def _registries(model, ref, path: str) -> tuple[tuple, tuple, tuple]:
    """:attr:`ModuleSummary.registries`, ``registrars`` and ``decorated`` of one module.

    A registry is a module-level name bound once, at the module level, to a dict or list
    display or an empty ``dict()`` / ``OrderedDict()``; its items are the module-level
    functions and classes (and imported project names) its display holds and that stores
    anywhere in the module put in it (``R[k] = v``, ``R.append(v)``, ``R.setdefault(k, v)``).
    A store of a parameter makes the module-level function around it a registrar."""
    tree = model.tree
    candidates: dict[str, ast.AST] = {}
    counts: collections.Counter = collections.Counter()
    for stmt in tree.body:
        if type(stmt) is ast.Assign and len(stmt.targets) == 1 and type(stmt.targets[0]) is ast.Name:
            name, value = stmt.targets[0].id, stmt.value
        elif type(stmt) is ast.AnnAssign and type(stmt.target) is ast.Name and stmt.value is not None:
            name, value = stmt.target.id, stmt.value
        else:
            continue
        counts[name] += 1
        t = type(value)
        if t in (ast.Dict, ast.List, ast.Tuple) or (
                t is ast.Call and not value.args and not value.keywords
                and chain_parts(value.func) is not None and chain_parts(value.func)[-1] in _REGISTRY_CALLS):
            candidates[name] = value
    decorated = []
    if not candidates and not any(getattr(n, "decorator_list", None) for n in tree.body):
        return (), (), ()
    top_defs = {n.name: n for n in tree.body if type(n) in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)}

    def item(expr: ast.AST):
        if type(expr) is ast.Name and expr.id in top_defs:
            return (path, expr.id)
        r = ref(expr) if type(expr) in (ast.Name, ast.Attribute) else None
        return r if r is not None and "." not in r[1] else None

    items: dict[str, list] = {name: [] for name in candidates if counts[name] == 1}
    for name in items:
        value = candidates[name]
        if type(value) is ast.Dict:
            for k, v in zip(value.keys, value.values):
                got = item(v) if k is not None else None
                if got is not None:
                    items[name].append((constants.literal(k), got))
        elif type(value) in (ast.List, ast.Tuple):
            for v in value.elts:
                got = item(v)
                if got is not None:
                    items[name].append((None, got))
    registrars = []
    tables: dict[str, int] = {}  # def register(table, name): ... table[name] = obj: the table's position
    if items:
        for stmt in tree.body:
            outer = stmt.name if type(stmt) in (ast.FunctionDef, ast.AsyncFunctionDef) else None
            params = set()
            if outer is not None:
                for node in ast.walk(stmt):
                    if type(node) in (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda):
                        a = node.args
                        params.update(x.arg for x in a.posonlyargs + a.args + a.kwonlyargs)
                own = [x.arg for x in stmt.args.posonlyargs + stmt.args.args]
            for node in ast.walk(stmt):
                t = type(node)
                if t is ast.Assign and len(node.targets) == 1 and type(node.targets[0]) is ast.Subscript:
                    target, key, value = node.targets[0].value, node.targets[0].slice, node.value
                elif t is ast.Call and type(node.func) is ast.Attribute and type(node.func.value) is ast.Name:
                    target = node.func.value
                    if node.func.attr == "append" and len(node.args) == 1:
                        key, value = None, node.args[0]
                    elif node.func.attr == "setdefault" and len(node.args) == 2:
                        key, value = node.args
                    else:
                        continue
                else:
                    continue
                if type(target) is ast.Name and outer is not None and target.id in own and target.id not in items \
                        and type(value) is ast.Name and value.id in params:
                    tables[outer] = own.index(target.id)  # a registrar into the table it is handed
                    continue
                if type(target) is not ast.Name or target.id not in items:
                    continue
                if type(value) is ast.Name and value.id in params:
                    registrars.append((outer, target.id))
                    continue
                got = item(value)
                if got is not None:
                    items[target.id].append((constants.literal(key) if key is not None else None, got))
    if tables:  # def register_trainer(name): return register(TRAINERS, name)
        for stmt in tree.body:
            if type(stmt) not in (ast.FunctionDef, ast.AsyncFunctionDef):
                continue
            for node in ast.walk(stmt):
                if type(node) is ast.Return and type(node.value) is ast.Call and type(node.value.func) is ast.Name \
                        and node.value.func.id in tables and len(node.value.args) > tables[node.value.func.id]:
                    table = node.value.args[tables[node.value.func.id]]
                    if type(table) is ast.Name and table.id in items:
                        registrars.append((stmt.name, table.id))
    for stmt in tree.body:
        if type(stmt) not in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            continue
        for d in stmt.decorator_list:
            call = d if type(d) is ast.Call else None
            got = item(call.func if call is not None else d)
            if got is None:
                continue
            key = None
            if call is not None:
                first = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "name"), None)
                key = constants.literal(first) if first is not None else None
            decorated.append((stmt.name, got, key))
    registries = tuple((name, tuple(dict.fromkeys(found))) for name, found in items.items())
    return registries, tuple(dict.fromkeys(registrars)), tuple(decorated)


def _attr_values(model, cls, new) -> tuple:
    """:attr:`ClassFacts.attr_values` of one class of the module: the one value an
    unconditional store gives, or ``("alts", ((guard, value), ...))`` for at most four
    stores of ``__init__`` in ``if`` branches whose tests are constant tests of stable chains
    (``if accelerator == "tpu": self.strategy = XLAStrategy(self)`` / ``else:``), in order."""
    out = []
    for attr, stores in cls.attrs.items():
        value = None
        alts: list | None = [] if len(stores) <= 4 else None
        for expr, ctx in stores:
            func = ctx.func
            if alts is None or expr is None or func is None or func.name != "__init__" or ctx.loops:
                alts = None
                break
            conds = () if ctx.frames is func.ctx.frames else constants.frame_conds(model, ctx, func.ctx.frames)
            arg = _attr_argument(model, expr, ctx, new) if conds is not None else None
            if arg is None:
                alts = None
                break
            alts.append((conds, arg))
        if alts:
            value = alts[0][1] if len(alts) == 1 and not alts[0][0] else ("alts", tuple(alts))
        out.append((attr, value))
    return tuple(out)


def _attr_argument(model, expr: ast.AST, ctx, new):
    """The argument form of a value an ``__init__`` stores (:func:`_attr_values`):
    ``a or B()`` as ``("or", items)`` (the first truthy item is the value), else
    :func:`.constants._argument`."""
    t = type(expr)
    if t is ast.Call and type(expr.func) is ast.Name and expr.func.id in ("list", "tuple") and len(expr.args) == 1 \
            and not expr.keywords and model.lookup(expr.func.id, ctx, None) is None:
        return _attr_argument(model, expr.args[0], ctx, new)  # list(callbacks or []): the same items
    if t is ast.BoolOp and type(expr.op) is ast.Or and len(expr.values) <= 4:
        values = list(expr.values)
        while len(values) > 1 and _empty(values[-1]):
            values.pop()  # callbacks or []: what the first holds when it holds something
        if len(values) == 1:
            return _attr_argument(model, values[0], ctx, new)
        items = tuple(constants._argument(model, v, ctx, new) for v in values)
        return ("or", items) if None not in items else None
    return constants._argument(model, expr, ctx, new)


def _empty(expr: ast.AST) -> bool:
    """``[]``, ``()``, ``{}`` or ``None``."""
    t = type(expr)
    return (t in (ast.List, ast.Tuple) and not expr.elts) or (t is ast.Dict and not expr.keys) \
        or (t is ast.Constant and expr.value is None)


def wrapper_receiver_differs(model, call, ctx, resolve, path: str, files) -> bool:
    """``obj.launch(fn, ...)`` named like a project launch wrapper (the model's
    ``project_launcher_selves``) on an object whose class is known and is none of the
    classes whose method of that name launches, nor a subclass of one (``SPMDBackend().launch``
    beside ``MultiProcessBackend.launch`` in the same module; a CPU ``Backend`` re-exported
    under another name; ``get_backend("cuda")``'s ``CudaBackend``, :func:`~.defs.factory_class`):
    no launch. False when unknown."""
    f = call.func
    if type(f) is not ast.Attribute:
        return False
    classes = {c for n, c, _ in model.project_launcher_selves or () if n == f.attr and c[1]}
    if not classes:
        return False
    got = model.instance_class(f.value, ctx)
    from .defs import _class_itself, factory_class, is_subclass  # (defs reads summaries' helpers: imported when used)


    cls = None
    if got is not None and got[0] == "local":
        cls = (path, got[1].name) if got[1].ctx.func is None else None
    elif got is not None:
        target = resolve(got[1])
        cls = _class_itself(target, files) if target is not None and "." not in target[1] else None
    if cls is None:  # backend = get_backend("cuda"): the class the factory's branch builds
        single = model.single_value(f.value, ctx) if type(f.value) in (ast.Name, ast.Attribute) else None
        value, vctx = single if single is not None else (f.value, ctx)
        parts = chain_parts(value.func) if type(value) is ast.Call else None
        target = resolve(parts) if parts is not None else None
        if target is not None and "." not in target[1]:
            cls = factory_class(target, *model.literal_arguments(value, vctx), files)
    if cls is None:
        return False
    return not is_subclass(cls, classes, files)


def _launched_out(model, ref, path: str, files=None, ref_parts=None) -> tuple:
    """:attr:`ModuleSummary.launched_out`: the launches whose launched function (the first
    argument or ``fn=``, a name or a dotted name, also in ``functools.partial(f, ...)``) the
    module's imports bind to a function of another project module (not a call of a launch
    wrapper's name on an object of another class: :func:`wrapper_receiver_differs`)."""
    out: list = []
    for call, lctx, targets, single in model.launches():
        if targets:
            continue  # a function of the module itself
        if files is not None and ref_parts is not None \
                and wrapper_receiver_differs(model, call, lctx, ref_parts, path, files):
            continue
        target = model.kwarg(call, "fn", 0)
        if type(target) is ast.Call and model.call_name(target, lctx) == "functools.partial" and target.args:
            target = target.args[0]  # partial(main_worker, cfg): main_worker runs
        if type(target) not in (ast.Name, ast.Attribute):
            continue
        r = ref(target)
        passes = tuple(a for a in _launch_args(model, call, lctx) if a[2][0] == "const") \
            if type(model.kwarg(call, "fn", 0)) in (ast.Name, ast.Attribute) else ()
        if r is not None and r[0] != path and (r, not single, passes) not in out:
            out.append((r, not single, passes))
    return tuple(out)


def _self_calls(model, func, quals) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """(``FunctionFacts.self_calls``, ``self_local``, ``self_steps``) of one function: the
    method names its own ``self.m(...)`` calls name in a method (not a static one), the
    module's functions the module alone resolves them to, and the ``self.<attr>``
    optimizers its ``xm.optimizer_step`` calls update."""
    if func.cls is None or not func.params or any(
            type(d) is ast.Name and d.id == "staticmethod" for d in func.node.decorator_list):
        return (), (), ()
    me = func.params[0]
    names: list[str] = []
    local: list[str] = []
    steps: list[str] = []
    for call, ctx in func.calls:
        if ctx.func is not func:
            continue
        f = call.func
        if type(f) is ast.Attribute and type(f.value) is ast.Name and f.value.id == me:
            if f.attr not in names:
                names.append(f.attr)
            local.extend(quals[id(t)] for t in model.function_of(f, ctx) if id(t) in quals)
        if model.call_name(call, ctx) == OPTIMIZER_STEP:
            opt = model.kwarg(call, "optimizer", 0)
            if type(opt) is ast.Attribute and type(opt.value) is ast.Name and opt.value.id == me \
                    and opt.attr not in steps:
                steps.append(opt.attr)
    return tuple(names), tuple(dict.fromkeys(local)), tuple(steps)


#: how many occurrences of one callee in one function are told apart (more: it always runs)
MAX_OCCURRENCES = 16


def _edges(model, func, quals, ref, bindings: dict, local: set, out: set, handed: set, new=None,
           dispatch_sites: set = frozenset(), files=None, recv_calls: list | None = None) -> tuple:
    """``FunctionFacts.edges`` of one function; its own ``self.m(...)`` calls under the key
    ``"self.m"``, its method calls on an object a parameter brought in (the module's
    dispatches, ``dispatch_sites``: ``(caller, line, method)``) under ``"@line.m"``, its
    calls of a parameter (``main(cfg)``: the function a caller handed in) under
    ``"param:main"``, its method calls on attribute chains (:func:`_receiver_site`, a method
    name some file of the project defines) under ``"recv:<chain>.<method>"``, those calls
    also appended to ``recv_calls`` as ``(call, ctx, key)``."""
    qual = quals.get(id(func))
    occ: dict = {}
    defaults = _or_defaults(model, func)
    always: set = set(handed)
    callee_names: set[int] = set()
    me = func.params[0] if func.cls is not None and func.params else None
    received: set = set()  # obj.m keys: kept with what each call passes (the object among it)
    for call, ctx in func.calls:
        if ctx.func is not func:
            continue
        f = call.func
        site = None  # (its guard and arguments: read only for a call the reach may follow)
        if type(f) is ast.Name:
            callee_names.add(id(f))
            if f.id in func.params and f.id != me and model._own_param(f, func, ctx):
                site = _site(model, call, ctx, defaults, new)  # main(cfg): the function a caller hands in
                occ.setdefault("param:" + f.id, []).append(site)
                received.add("param:" + f.id)
            elif new is not None and recv_calls is not None and _called_object(model, f, ctx):
                recv = new(f, ctx)
                if recv is not None and recv[0] in ("ret", "reg", "either", "nth"):
                    # model = build_model(cfg).to(device); model(x): the __call__ / forward of what
                    # the reach finds the call returned
                    conds, args = _site(model, call, ctx, defaults, new)
                    key = f"recv:{f.id}.__call__"
                    occ.setdefault(key, []).append((conds, ((-1, None, recv),) + tuple(a for a in args if a[0] != -1)))
                    recv_calls.append((call, ctx, key))
        elif me is not None and type(f) is ast.Attribute and type(f.value) is ast.Name and f.value.id == me:
            site = _site(model, call, ctx, defaults, new)
            occ.setdefault("self." + f.attr, []).append(site)
        elif type(f) is ast.Attribute and (qual, call.lineno, f.attr) in dispatch_sites:
            site = _site(model, call, ctx, defaults, new)
            occ.setdefault(f"@{call.lineno}.{f.attr}", []).append(site)
        elif new is not None and type(f) is ast.Attribute and type(f.value) in (ast.Name, ast.Call, ast.Attribute):
            recv = new(f.value, ctx) if type(f.value) is not ast.Attribute else None
            if recv is not None and recv[0] == "new":  # obj.m(...) on an object built here
                site = _site(model, call, ctx, defaults, new)
                key = (recv[1][0], f"{recv[1][1]}.{f.attr}")
                occ.setdefault(key, []).append(site)
                received.add(key)
            elif type(f.value) is not ast.Call and (files is None or files.defines(f.attr)):
                key, site = _receiver_site(model, call, ctx, new, defaults)
                if key is not None:  # self.strategy.launcher.launch(...): on what the chain holds
                    occ.setdefault(key, []).append(site)
                    if recv_calls is not None:
                        recv_calls.append((call, ctx, key))
        r = ref(f)
        if r is not None and r in out:
            site = site or _site(model, call, ctx, defaults, new)
            occ.setdefault(r, []).append(site)
        if type(f) is ast.Name:
            for t in model.function_of(f, ctx):
                q = quals.get(id(t))
                if q in local:
                    site = site or _site(model, call, ctx, defaults, new)
                    occ.setdefault(q, []).append(site)
    loads = model._loads_by_func().get(id(func), {})
    read = None  # names read other than as a callee: walked once a name of a project function is met
    for name in func.names:
        sites = loads.get(name, ())
        keys: list = []
        if name in bindings:
            r = ref(ast.Name(id=name))
            if r is not None and r in out:
                keys.append(r)
        for _, kind, target, _ in model.lookup(name, Ctx(func.scope, func, (), ()), None) or ():
            if kind == "class":
                keys.extend(quals[id(m)] for m in model._class_methods(target) if id(m) in quals)
            elif kind == "def" and id(target) in quals:
                keys.append(quals[id(target)])
        if not keys:
            continue
        if read is None:
            read = _names_read_uncalled(func.node, callee_names)
        if name in read:  # read besides its calls (passed on, partial(f, ...)): where it runs is not told
            always.update(keys)
        elif not any(k in occ for k in keys):  # a class constructor call: its methods
            for c in sites:
                for k in keys:
                    occ.setdefault(k, []).append((constants.guard(model, c), ()))
    found = []
    for key, sites in occ.items():
        param = type(key) is str and key.startswith("param:")  # (kept when bare: the only record of the call)
        if (key in always and key not in received) or len(sites) > MAX_OCCURRENCES \
                or not (param or any(c or a for c, a in sites)):
            continue
        found.append((key, tuple(dict.fromkeys(sites))))
    return tuple(found)


def _called_object(model, name: ast.Name, ctx) -> bool:
    """``name`` is bound once, by an assignment in the calling function itself, to the
    result of a call (``model = build_model(cfg)``): an object whose class the reach may know."""
    bindings = model.lookup(name.id, ctx, None)
    if not bindings or len(bindings) != 1:
        return False
    _, kind, value, bctx = bindings[0]
    if kind == "item" and type(value) is tuple:  # model, opt = acc.prepare(model, opt)
        kind, value = "value", value[0]
    return kind == "value" and type(value) is ast.Call and bctx is not None and bctx.func is ctx.func


def _receiver_site(model, call: ast.Call, ctx, new, defaults: dict) -> tuple:
    """``(edge key, site)`` of a method call on an attribute chain (``self.strategy.launcher.
    launch(self._run, ...)``, ``strategy.launcher.launch(train, cfg)`` on an object built
    here): the key ``"recv:<chain>.<method>"``, the receiver in the site's passes at index
    ``-1`` (:func:`_receiver`: the reach evaluates it on the objects it knows); ``(None,
    None)`` when the chain's root is neither a parameter nor an object built here."""
    f = call.func
    recv = _receiver(model, f.value, ctx, new)
    parts = chain_parts(f.value)
    if recv is None or parts is None:
        return None, None
    conds, args = _site(model, call, ctx, defaults, new)
    return "recv:" + ".".join(parts) + "." + f.attr, (conds, ((-1, None, recv),) + tuple(a for a in args if a[0] != -1))


def _receiver(model, expr: ast.AST, ctx, new, depth: int = 0):
    """The argument form of an attribute chain a method is called on: ``("chain",
    "self.strategy.launcher")`` rooted in a parameter of the function (a stable chain), or
    ``("get", value, attr)`` on an object the function or module builds (``strategy =
    XLAStrategy(...)``; ``strategy.launcher``); else ``None``."""
    if depth > 4:
        return None
    if type(expr) is ast.Name:  # launcher = self.strategy.launcher; launcher.launch(...)
        loop = _loop_over(model, expr, ctx)
        if loop is not None:  # for cb in trainer.callbacks: cb.m(...): on each item the chain holds
            inner = _receiver(model, loop.node.iter, loop.ctx, new, depth + 1) \
                if type(loop.node.iter) in (ast.Name, ast.Attribute) else None
            return ("elt", inner) if inner is not None else None
        bindings = model.read_bindings(expr, ctx)
        if bindings and len(bindings) == 1 and bindings[0][1] == "param" and bindings[0][2] is ctx.func \
                and ctx.func.ctx.func is None and not (ctx.func.cls is not None and expr.id == ctx.func.params[0]):
            return ("chain", expr.id)  # build_everything(cfg, accelerator): accelerator.prepare(...)
        single = model.single_value(expr, ctx)
        if single is None:  # optimizer = acc.prepare(model, optimizer)[1] as a tuple item
            got = new(expr, ctx, depth + 1) if _called_object(model, expr, ctx) else None
            return got if got is not None and got[0] == "nth" else None
        if single[1] is None or single[1].func is not ctx.func:
            return None
        if type(single[0]) is ast.Call:  # model = self.strategy.setup_module(module); model.training_step(...)
            got = new(expr, ctx, depth + 1)
            return got if got is not None and got[0] in ("ret", "new", "reg") else None
        if type(single[0]) is not ast.Attribute:
            return None
        return _receiver(model, single[0], single[1], new, depth + 1)
    if type(expr) is not ast.Attribute:
        return None
    chain = _param_chain(model, expr, ctx)
    if chain is not None:
        return ("chain", chain)
    if _stored_before(model, expr, ctx) is not None:  # self.module = self.strategy.setup_module(module)
        got = new(expr, ctx, depth + 1)  # ... self.module.training_step(batch): what the store holds
        if got is not None and got[0] in ("new", "ret", "reg", "get"):
            return got
    if type(expr.value) is ast.Name:  # trainer = self.trainer; trainer.strategy.m(...)
        inner = _receiver(model, expr.value, ctx, new, depth + 1)
        if inner is not None:
            return ("chain", inner[1] + "." + expr.attr) if inner[0] == "chain" else ("get", inner, expr.attr)
    base = new(expr.value, ctx, depth + 1) if type(expr.value) in (ast.Name, ast.Call) else _receiver(model, expr.value, ctx, new, depth + 1)
    return ("get", base, expr.attr) if base is not None and base[0] in ("new", "get", "ret", "reg", "nth") else None


def _stored_before(model, expr: ast.Attribute, ctx) -> tuple | None:
    """``(value, ctx)`` of the store ``self.x = value`` that a read ``self.x`` sees in the same
    function: the last one before it at the function's own level (no branch, no loop, no
    nested function), with no other store of ``self.x`` in the function after it and no
    call before the read that could rebind it on another path; ``None`` otherwise."""
    func = ctx.func
    base = expr.value
    if func is None or func.cls is None or not func.params or type(base) is not ast.Name \
            or base.id != func.params[0]:
        return None  # (a read in a loop sees the store before the loop: none after it, none in a loop)
    index = model._cache.get("self_stores")
    if index is None:  # (id(function), attr) -> the function's own stores of self.attr, once per module
        index = model._cache["self_stores"] = {}
        for target, value, sctx in model.attr_stores:
            f = sctx.func
            if f is not None and f.cls is not None and f.params and type(target.value) is ast.Name \
                    and target.value.id == f.params[0]:
                index.setdefault((id(f), target.attr), []).append((target, value, sctx))
    found = None
    for target, value, sctx in index.get((id(func), expr.attr), ()):
        if target.lineno >= expr.lineno or sctx.loops or sctx.frames is not func.ctx.frames:
            return None  # (a store after the read, in a loop or a branch: not the one value)
        if found is None or target.lineno > found[0].lineno:
            found = (target, value, sctx)
    return (found[1], found[2]) if found is not None and found[1] is not None else None


def _loop_over(model, name: ast.Name, ctx):
    """The ``for`` loop of ``ctx``'s own function whose target is ``name``, the name's one
    binding there (``for cb in self.callbacks:``); else ``None``."""
    for loop in reversed(ctx.loops):
        node = loop.node
        if type(node) is ast.For and type(node.target) is ast.Name and node.target.id == name.id \
                and loop.ctx.func is ctx.func:
            bindings = model.lookup(name.id, ctx, None)
            return loop if bindings and len(bindings) == 1 else None
    return None


def _param_chain(model, expr: ast.AST, ctx) -> str | None:
    """``"self.strategy.launcher"`` for an attribute chain rooted in a parameter of the
    function (not nested) that nothing rebinds, when the function stores no attribute on
    the chain's first link (``self.strategy = ...``) and hands the root to no ``setattr``;
    else ``None``. (Looser than :func:`.constants.stable_chain`: ``self.x = ...`` elsewhere in
    the method does not change what ``self.strategy`` holds.)"""
    parts = chain_parts(expr)
    func = ctx.func
    if parts is None or len(parts) < 2 or func is None or func.ctx.func is not None or parts[0] not in func.params:
        return None
    bindings = model.lookup(parts[0], ctx, None)
    if not bindings or len(bindings) != 1 or bindings[0][1] != "param":
        return None
    by_func = model._cache.get("param_chain_stores")
    if by_func is None:  # id(function) -> the first two links its (and its nested code's) stores name, once per module
        by_func = model._cache["param_chain_stores"] = {}
        for target, _, sctx in model.attr_stores:
            got = chain_parts(target)
            f = sctx.func
            while got is not None and len(got) >= 2 and f is not None:
                by_func.setdefault(id(f), set()).add(got[:2])
                f = f.ctx.func
        for f in model.functions:
            for call, _ in f.calls:
                if type(call.func) is ast.Name and call.func.id in ("setattr", "delattr") and call.args \
                        and type(call.args[0]) is ast.Name:
                    by_func.setdefault(id(f), set()).add((call.args[0].id, "*"))
    stores = by_func.get(id(func), ())
    if parts[:2] in stores or (parts[0], "*") in stores:
        return None
    return ".".join(parts)


def _own_frames_off(model, ctx) -> bool:
    """A branch frame of ``ctx``'s own function (not of an enclosing one: the reach passed
    those to get here) is XLA-off (the model's ``is_xla_off`` frames)."""
    base = ctx.func.ctx.frames if ctx.func is not None else None
    link = ctx.frames or None
    while link is not None and link is not base:
        if model._frame_off(link.frame):
            return True
        link = link.parent
    return False


def _site(model, call, ctx, defaults: dict, new) -> tuple:
    """``(guard, passes)`` of one call for ``FunctionFacts.edges`` (a ``strategy or
    Default()`` call's condition first; a call in an XLA-off branch needs XLA off,
    :data:`.constants.XLA_OFF`)."""
    conds = constants.guard(model, ctx)
    if _own_frames_off(model, ctx):
        conds = (constants.XLA_OFF,) + conds
    if id(call) in defaults:
        conds = (defaults[id(call)],) + conds
    f = call.func
    return conds, constants.passes(model, call, ctx, new) if type(f) in (ast.Name, ast.Attribute) else ()


def _or_defaults(model, func) -> dict[int, tuple]:
    """id of the call ``Default()`` in ``strategy or Default()`` (a stable chain first) ->
    the condition it runs under, ``strategy is None`` (a falsy value; an object is not);
    for the calls of ``func``'s own code (the only ones :func:`_edges` asks about), from
    the ``or`` expressions the model's walk met (``Model.or_calls``: no walk of its own)."""
    candidates = model.or_calls
    out: dict[int, tuple] = {}
    if not candidates:
        return out
    fctx = None
    for call, ctx in func.calls:
        head = candidates.get(id(call)) if ctx.func is func else None
        if head is not None:
            fctx = fctx or Ctx(func.scope, func, (), ())
            chain = constants.stable_chain(model, head, fctx)
            if chain is not None:
                out[id(call)] = (chain, ("NoneType", None), True, True)
    return out


def _super_calls(func) -> tuple[str, ...]:
    """``FunctionFacts.super_calls`` of one method: the ``m`` of its ``super().m(...)``."""
    if func.cls is None:
        return ()
    out: list[str] = []
    for call, ctx in func.calls:
        f = call.func
        if ctx.func is func and type(f) is ast.Attribute and type(f.value) is ast.Call \
                and type(f.value.func) is ast.Name and f.value.func.id == "super" and f.attr not in out:
            out.append(f.attr)
    return tuple(out)


def _names_read_uncalled(node: ast.AST, callees: set[int]) -> set[str]:
    """The names a function's own code reads other than as the callee of a call (ids of
    those callee nodes: ``callees``); nested ``def`` and ``class`` bodies are their own."""
    out: set[str] = set()
    todo = list(ast.iter_child_nodes(node))
    while todo:
        n = todo.pop()
        t = type(n)
        if t in _OWN_BODIES:
            todo.extend(n.decorator_list)  # (a decorator runs here)
            continue
        if t is ast.Name:
            if type(n.ctx) is ast.Load and id(n) not in callees:
                out.add(n.id)
            continue  # (its one child is its context)
        for field in n._fields:  # (ast.iter_child_nodes without its generators: the same children)
            value = getattr(n, field, None)
            if type(value) is list:
                todo.extend(v for v in value if isinstance(v, ast.AST))
            elif isinstance(value, ast.AST):
                todo.append(value)
    return out


def _function_launches(model, quals, ref, path: str, new, files=None, ref_parts=None) -> dict[int, tuple]:
    """``FunctionFacts.launches`` by function id: each launch inside a function, with its
    launched function (of the module or, through its imports, of another) and what its
    ``args=(...)`` tuple passes (not a wrapper's name on an object of another class:
    :func:`wrapper_receiver_differs`)."""
    out: dict[int, list] = {}
    for call, ctx, targets, single in model.launches():
        if ctx.func is None:
            continue
        if files is not None and ref_parts is not None \
                and wrapper_receiver_differs(model, call, ctx, ref_parts, path, files):
            continue
        keys = [quals[id(t)] for t in targets if id(t) in quals]
        if not keys:
            target = model.kwarg(call, "fn", 0)
            if type(target) is ast.Name and target.id in ctx.func.params:
                keys = [("", target.id)]  # torch_xla.launch(fn, ...): the function a caller hands in
            else:
                r = ref(target) if type(target) in (ast.Name, ast.Attribute) else None
                if r is None or r[0] == path:
                    continue
                keys = [r]
        given = model.kwarg(call, "args", 1)
        splat = given.id if type(given) is ast.Name and given.id == _varargs(ctx.func) else ""
        args = _launch_args(model, call, ctx, new)
        for k in keys:
            item = (k, not single, args, splat)
            if item not in out.setdefault(id(ctx.func), []):
                out[id(ctx.func)].append(item)
    return {k: tuple(v) for k, v in out.items()}


def _launch_args(model, call: ast.Call, ctx, new=None) -> tuple:
    """What a launch's literal ``args=(...)`` tuple passes, in :func:`.constants.passes` form
    (positions of the launched function after its process index): its literals, stable
    chains (and with ``new``, objects and functions), and a ``*args`` item as a splice
    (``args=(self._strategy, *args)``; positions after it are not told); ``()`` for anything
    but a tuple display."""
    given = model.kwarg(call, "args", 1)
    if type(given) is not ast.Tuple:
        return ()
    found = []
    for i, e in enumerate(given.elts):
        if type(e) is ast.Starred:
            got = constants._argument(model, e.value, ctx) if type(e.value) is ast.Name else None
            if got is not None and got[0] == "chain":
                found.append((i, constants.SPLAT, got))
            break
        got = constants._argument(model, e, ctx, new)
        if got is not None:
            found.append((i, None, got))
    return tuple(found)


def _module_facts(model, quals, ref, new) -> FunctionFacts | None:
    """:attr:`ModuleSummary.entry`: the module-level calls of a module that does not use
    torch_xla, as one function (``trainer = Trainer(strategy=XLAStrategy())`` ...
    ``trainer.fit(Net(), Data())`` in its ``__main__`` block), with the constants and
    objects each call passes; ``None`` when it calls nothing of the project."""
    local: list[str] = []
    out: list = []
    occ: dict = {}
    for call, ctx in model.calls:
        if ctx.func is not None:
            continue
        f = call.func
        if type(f) not in (ast.Name, ast.Attribute):
            continue
        args = constants.passes(model, call, ctx, new)
        keys = [quals[id(t)] for t in model.function_of(f, ctx) if id(t) in quals] if type(f) is ast.Name else []
        local.extend(k for k in keys if k not in local)
        r = ref(f)
        if r is not None:
            keys.append(r)
        elif args and args[0][0] == -1 and args[0][2][0] == "new":  # obj.m(...) on an object built here
            keys.append((args[0][2][1][0], f"{args[0][2][1][1]}.{f.attr}"))
        elif type(f) is ast.Attribute and type(f.value) in (ast.Attribute, ast.Name):
            key, site = _receiver_site(model, call, ctx, new, {})
            if key is not None:  # strategy.launcher.launch(train, cfg): on what the chain holds
                keys.append(key)
                args = site[1]
        for k in keys:
            if type(k) is tuple and k not in out:
                out.append(k)
            occ.setdefault(k, []).append(((), args))
    if not local and not out and not occ:
        return None
    edges = tuple((k, tuple(dict.fromkeys(v))) for k, v in occ.items()
                  if len(v) <= MAX_OCCURRENCES and any(a for _, a in v))
    return FunctionFacts("<module>", 0, tuple(local), tuple(out), edges=edges)


def _varargs(func) -> str:
    """The name of ``func``'s ``*args`` parameter, or ``""``."""
    node = func.node if func is not None else None
    v = node.args.vararg if node is not None and hasattr(node, "args") else None
    return v.arg if v is not None else ""


_OWN_BODIES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _launch_contexts(model, quals) -> tuple:
    """``ModuleSummary.launch_contexts``: for each launch of a module function, what the
    launch site's ``if`` tests and its ``args=(...)`` tell of the launched function's
    parameters (its first one is the process index)."""
    out = []
    for call, ctx, targets, _ in model.launches():
        conds = constants.guard(model, ctx)
        known = constants.positive(conds)
        args = _launch_args(model, call, ctx)  # (args=("tpu",): the constants, whatever guards the launch)
        plain = type(model.kwarg(call, "fn", 0)) is ast.Name
        for t in targets:
            q = quals.get(id(t))
            if q is not None:
                context = constants.bind(args, known, tuple(t.params), offset=1) if plain and args else {}
                out.append((q, constants.frozen(context)))
    return tuple(dict.fromkeys(out))


def _script_roots(model, ref) -> tuple[set[int], tuple[Ref, ...]]:
    """(ids of the functions, refs of other modules' functions and classes) that the
    module-level XLA code of a torch_xla module runs: the calls outside any ``def`` that are
    not in an XLA-off branch, followed through the module's own calls."""
    local, out = [], []
    for call, ctx in model.calls:
        if ctx.func is not None or model.is_xla_off(ctx):
            continue
        local.extend(model.function_of(call.func, ctx))
        r = ref(call.func)
        if r is not None and r not in out:
            out.append(r)
    if not local and not out:
        return set(), ()
    reached = model.reachable(local)
    for func in model.functions:
        if id(func) not in reached:
            continue
        for call, ctx in func.calls:
            if ctx.func is func and not model.is_xla_off(ctx):
                r = ref(call.func)
                if r is not None and r not in out:
                    out.append(r)
    return reached, tuple(out)


def _setup(model) -> LaunchSetup:
    """The launching module's :class:`LaunchSetup`, from its own model."""
    reduces = model.reduces_gradients_elsewhere() or any(
        model.in_xla_code(ctx) and model.is_launched(ctx) and model.call_name(call, ctx) != OPTIMIZER_STEP
        and reduces_directly(model, call, ctx) for call, ctx in model.calls)
    seeded = bool(model.calls_to("torch_xla.manual_seed", "torch_xla.core.xla_model.set_rng_state"))
    return LaunchSetup(reduces, model.process_group_possible(), model.uses_spmd(), model.uses_framework(),
                       device_seeded=seeded)


def _does(model, func, ref) -> tuple:
    """(xla_calls, may_sync, yields_seen, steps, updates, syncs, param_syncs, local_master,
    saves, master, moves_param, returns_device) of one function, from its module's model."""
    xla, sync = [], False
    for call, ctx in func.calls:
        if ctx.func is not func:
            continue  # a nested def's call is the nested def's
        q = model.call_name(call, ctx)
        if q is not None and q.startswith("torch_xla") and q not in xla:
            xla.append(q)
        if not sync and (model.is_sync_call(call, ctx) or (model.unseen_sync_call(call, ctx) and ref(call.func) is None)):
            sync = True
    inner = Ctx(func.scope, func, (), ())
    values = [(v, c) for v, c in func.returns if v is not None]
    values += [(n.value, inner) for n in model.yields.get(id(func), ()) if n.value]
    seen = bool(values) and all(model.iterable_seen(v, c) for v, c in values)
    params = []
    if func.cls is None:
        for call, ctx in func.calls:
            f = call.func
            if ctx.func is func and type(f) is ast.Attribute and type(f.value) is ast.Name \
                    and f.value.id in func.params and (f.attr == "mark_step" or (
                        f.attr == "optimizer_step" and model.const(model.kwarg(call, "barrier", 1), ctx) is True)):
                item = (func.params.index(f.value.id), f.value.id)
                if item not in params:
                    params.append(item)
    one = len(func.returns) == 1 and func.returns[0][0] is not None
    master = one and model.local_master_test(func.returns[0][0], func.returns[0][1]) is not None
    scope = (model.master_scope(func.returns[0][0], func.returns[0][1]) or "") if one else ""
    saves = []
    for call, ctx in func.calls:
        if ctx.func is func and model.call_name(call, ctx) in SAVE_CALLS:
            only = model.kwarg(call, "master_only", 2)
            glob = model.kwarg(call, "global_master", 3)
            if only is not None and model.const(only, ctx) is not True:
                kind = "chosen"
            elif glob is not None and model.const(glob, ctx) is True:
                kind = "global"
            elif glob is not None and model.const(glob, ctx) is not False:
                kind = "chosen"  # a global_master that cannot be seen
            else:
                kind = "default"
            if kind not in saves:
                saves.append(kind)
    returns = func.returns
    moved = None
    if returns and all(v is not None and c is not None for v, c in returns):
        for v, c in returns:
            got = _moved_param(model, func, v, c)
            if got is None or (moved is not None and got != moved):
                moved = None
                break
            moved = got
    on = [(v, c) for v, c in returns if c is None or not _own_frames_off(model, c)]  # (not a CUDA branch's return)
    device = bool(on) and all(v is not None and c is not None and (
        is_xla_device(model, v, c) or model.device_place(v, c) == "xla") for v, c in on)  # (return self._device)
    return (tuple(xla), sync, seen, model.does_step(func), model.func_updates(func), model.func_syncs(func),
            tuple(params), master, tuple(saves), scope, moved or (), device)


def _returns_loader(model, func) -> str:
    """``"plain"`` / ``"device"`` when every ``return`` of ``func`` gives that loader kind
    (``return DataLoader(ds, ...)``, ``return pl.MpDeviceLoader(loader, dev)``), else ``""``."""
    kinds = {model.loader_kind(v, c) if v is not None and c is not None else None for v, c in func.returns}
    return kinds.pop() if len(kinds) == 1 and next(iter(kinds)) in ("plain", "device") else ""


def _inherited_call(model, func: ast.Attribute, ctx, path: str) -> Ref | None:
    """``(path, "C.m")`` when ``func`` is ``obj.m`` on an instance of a top-level class ``C``
    of this module that defines no ``m`` in its own bases of the module and has a base
    elsewhere (``TaggingTrainer(TPUTrainer)``: ``trainer.train()`` runs the framework's
    ``train`` on a ``TaggingTrainer``, whose overrides its ``self.m()`` calls reach); else None."""
    got = model.instance_class(func.value, ctx)
    if got is None or got[0] != "local":
        return None
    cls = got[1]
    if cls.ctx.func is not None or cls.ctx.scope is not model.module_scope:
        return None
    mro = model.mro(cls)
    if any(func.attr in c.methods for c in mro):
        return None  # the module's own method: a local call
    local = {c.name for c in mro}
    if not any(not (type(b) is ast.Name and b.id in local) for c in mro for b in c.node.bases):
        return None  # no base outside the module: nothing of another module runs
    return (path, f"{cls.name}.{func.attr}")


def _shared_effect(model, func) -> str:
    """The first action of ``func``'s own code on something every host shares (the rules'
    model's ``effects.shared_effect``: a tracker, a hub or bucket upload, ``gsutil cp``), or ``""``."""
    from ..model.effects import shared_effect

    for call, ctx in func.calls:
        if ctx.func is func:
            what = shared_effect(model, call, ctx)
            if what:
                return what
    return ""


def _returns_sampler(model, func) -> str:
    """``"whole"`` / ``"distributed"`` when every ``return`` of ``func`` gives a sampler of
    that kind (the model's ``sampler_value_kind``, in the module alone), else ``""``."""
    kinds = {model.sampler_value_kind(v, c, project=False) if v is not None and c is not None else None
             for v, c in func.returns}
    return kinds.pop() or "" if len(kinds) == 1 else ""


def _returns_alts(model, func, new) -> tuple:
    """:attr:`FunctionFacts.returns_alts` of one function (at most four ``return``
    statements, none of them in a loop or a nested function's)."""
    returns = func.returns
    if not returns or len(returns) > 4:
        return ()
    out = []
    for value, ctx in returns:
        if value is None or ctx is None or ctx.loops or ctx.func is not func:
            return ()
        got = new(value, ctx) if type(value) in (ast.Call, ast.Name) else None
        if got is None and type(value) is ast.Constant and value.value is None:
            got = ("const", ("NoneType", None))
        if got is None:
            return ()
        conds = constants.guard(model, ctx)
        if _own_frames_off(model, ctx):
            conds = (constants.XLA_OFF,) + conds
        out.append((conds, got))
    return tuple(out) if any(v[0] in ("new", "reg") for _, v in out) else ()


def _returned_param(model, func) -> int:
    """:attr:`FunctionFacts.returns_param` of one function: every ``return`` gives back one
    parameter (not a method's ``self``) as the same object, directly, through a name bound
    once, or through methods that return the module they are called on (``.to(...)``,
    ``.train()``: the model's ``_SAME_MODULE``); else -1."""
    found = -1
    if not func.returns:
        return -1
    for value, ctx in func.returns:
        index = _param_index(model, func, value, ctx)
        if index < 0 or (found >= 0 and index != found):
            return -1
        found = index
    return found


def _param_index(model, func, value, ctx) -> int:
    """The index (``self`` counts) of the parameter of ``func`` (not a method's ``self``)
    that ``value`` is as the same object (:func:`_returned_param`'s steps), else -1."""
    for _ in range(6):
        if value is None or ctx is None:
            return -1
        if type(value) is ast.Call and type(value.func) is ast.Attribute and value.func.attr in model._SAME_MODULE:
            value = value.func.value
            continue
        if type(value) is not ast.Name:
            return -1
        bindings = model.read_bindings(value, ctx)
        if not bindings or len(bindings) != 1:
            return -1
        if bindings[0][1] == "param" and bindings[0][2] is func:
            i = func.params.index(value.id) if value.id in func.params else -1
            return i if not (func.cls is not None and i == 0) else -1
        single = model.single_value(value, ctx)
        if single is None:
            return -1
        value, ctx = single
    return -1


def _returns_items(model, func, new) -> tuple:
    """:attr:`FunctionFacts.returns_items` of one function: when every ``return`` gives a
    tuple display of the same length (2 to 6), not in a loop, the value of each position
    (:func:`.constants.passes` argument form: ``("chain", param)`` for a parameter given back
    as the same object, ``model = model.to(self.device)``; an object or call value of the
    summary's ``new``; ``None`` unknown), positions the returns disagree on unknown."""
    returns = func.returns
    if not returns or len(returns) > 4:
        return ()
    out = None
    for value, ctx in returns:
        if type(value) is not ast.Tuple or not 2 <= len(value.elts) <= 6 or ctx is None or ctx.loops \
                or ctx.func is not func or (out is not None and len(out) != len(value.elts)):
            return ()
        items = []
        for e in value.elts:
            i = _param_index(model, func, e, ctx)
            if i >= 0:
                items.append(("chain", func.params[i]))
            else:
                items.append(new(e, ctx) if type(e) in (ast.Call, ast.Name) else None)
        out = items if out is None else [a if a == b else None for a, b in zip(out, items)]
    return tuple(out) if out is not None and any(v is not None for v in out) else ()


def _moved_in_place(model, func) -> tuple[int, ...]:
    """:attr:`FunctionFacts.moved_in_place`: the parameters ``p`` of ``func`` whose
    ``p.to(D)`` (``D`` a device that may be the XLA device, :func:`_moved_param`) its own
    code runs outside any branch or loop; for a method, ``D`` may be ``self.device`` when
    the method set it from ``torch_xla.device()`` before."""
    found: list[int] = []
    for call, ctx in func.calls:
        f = call.func
        if ctx.func is not func or ctx.loops or ctx.frames or type(f) is not ast.Attribute or f.attr != "to" \
                or type(f.value) is not ast.Name or f.value.id not in func.params:
            continue
        got = _moved_param(model, func, call, ctx)
        if got is None and func.cls is not None and func.params and len(call.args) == 1 and not call.keywords:
            got = _self_device_move(model, func, call, ctx)
        if got is not None and got[1] == "xla" and got[0] not in found:
            found.append(got[0])
    return tuple(found)


def _self_device_move(model, func, call: ast.Call, ctx) -> tuple[int, str] | None:
    """``p.to(self.device)`` in a method that stored ``self.device = <the XLA device>``
    earlier in its own body: ``(index, "xla")``."""
    dev = call.args[0]
    me = func.params[0]
    if type(dev) is not ast.Attribute or type(dev.value) is not ast.Name or dev.value.id != me:
        return None
    name = call.func.value.id
    if name == me:
        return None
    stores = [(v, c) for v, c in func.cls.attrs.get(dev.attr, ()) if c is not None]
    if len(stores) != 1 or stores[0][1].func is not func or getattr(stores[0][0], "lineno", call.lineno) >= call.lineno:
        return None
    if model.device_place(stores[0][0], stores[0][1]) != "xla":
        return None
    return func.params.index(name), "xla"


def _moved_param(model, func, value: ast.AST, ctx, depth: int = 0) -> tuple[int, str] | None:
    """``(index, where)`` when ``value`` is ``p.to(D)`` for a parameter ``p`` of ``func``
    (read where the parameter is its only binding), with ``D`` a device that may be the XLA
    device (``"xla"``) or ``self.m()`` in a method (``"self.m"``), also wrapped by DDP, FSDP
    or ``torch.compile`` and through a name bound once to it (``model =
    model.to(self.device)``; ``return DDP(model, ...)``); else None."""
    if depth > 4 or value is None or ctx is None:
        return None
    if type(value) is ast.Name:
        bindings = model.read_bindings(value, ctx)
        if bindings and len(bindings) == 1 and bindings[0][1] == "value":
            single = model.single_value(value, ctx)
            return _moved_param(model, func, *single, depth + 1) if single is not None else None
        return None
    if type(value) is ast.Call and (model.call_name(value, ctx) or "").startswith(model._FORWARDING_WRAPPERS):
        inner = model.kwarg(value, "model" if model.call_name(value, ctx) == "torch.compile" else "module", 0)
        return _moved_param(model, func, inner, ctx, depth + 1) if isinstance(inner, ast.AST) else None
    if type(value) is not ast.Call or type(value.func) is not ast.Attribute or value.func.attr != "to" \
            or type(value.func.value) is not ast.Name:
        return None
    name = value.func.value.id
    if name not in func.params or (func.cls is not None and name == func.params[0]):
        return None
    bindings = model.read_bindings(value.func.value, ctx)
    if not bindings or len(bindings) != 1 or bindings[0][1] != "param":
        return None
    index = func.params.index(name)
    dev = model.kwarg(value, "device", 0)
    if not isinstance(dev, ast.AST) or len(value.args) + len(value.keywords) != 1:
        return None
    if model.device_place(dev, ctx) == "xla":
        return index, "xla"
    if func.cls is not None and func.params and type(dev) is ast.Call and not dev.args and not dev.keywords \
            and type(dev.func) is ast.Attribute and type(dev.func.value) is ast.Name \
            and dev.func.value.id == func.params[0]:
        return index, "self." + dev.func.attr
    return None


def resolve_chain(parts: tuple[str, ...] | None, bindings: dict, files: ProjectFiles) -> Ref | None:
    """The project function or class a dotted chain names through the module's import
    bindings (:func:`import_bindings`): ``(file, "f" / "Cls" / "Cls.m")``, or ``None``."""
    if not parts or parts[0] not in bindings:
        return None
    target, prefix = bindings[parts[0]]
    rest = prefix + list(parts[1:])
    while rest and (target.name == "__init__.py" or target.is_dir()):
        sub = files.submodule(target, rest[0])
        if sub is None:
            break
        target, rest = sub, rest[1:]
    if not rest or target.is_dir():
        return None
    return str(target), ".".join(rest[:2])


def import_bindings(path: Path, tree: ast.AST, files: ProjectFiles) -> dict[str, tuple[Path, list[str]]]:
    """Public name of :func:`_import_bindings` (the engine asks it for the linted module)."""
    return _import_bindings(path, tree, files)


def _import_bindings(path: Path, tree: ast.AST, files: ProjectFiles) -> dict[str, tuple[Path, list[str]]]:
    """Names bound by imports of project modules, anywhere in the module (relative imports
    too, which the model leaves unresolved): name -> (module file, attribute parts). The
    first import of a name wins."""
    out: dict[str, tuple[Path, list[str]]] = {}
    for node in _import_statements(tree):
        t = type(node)
        if t is ast.ImportFrom:
            target = files.resolve_module(path, node.module or "", node.level or 0)
            if target is None:
                continue  # no project file: unknown
            for alias in node.names:
                bound = alias.asname or alias.name
                if alias.name != "*" and bound not in out:
                    out[bound] = (target, [alias.name])
        elif t is ast.Import:
            for alias in node.names:
                bound = alias.asname or alias.name.split(".")[0]
                parts = alias.name.split(".") if alias.asname else alias.name.split(".")[:1]
                target = files.resolve_module(path, ".".join(parts))
                if target is not None and bound not in out:
                    out[bound] = (target, [])
    return out


def _import_statements(tree: ast.AST) -> list:
    """Every ``import`` / ``from ... import`` statement of the module, nested ones too, in
    ``ast.walk``'s order (breadth first: the first import of a name wins as before); only
    statements are visited (an import is never inside an expression)."""
    out = []
    todo = collections.deque([tree])
    blocks = _BLOCK_FIELDS
    while todo:
        node = todo.popleft()
        t = type(node)
        fields = blocks.get(t)
        if fields is None:  # (once per node type: its block fields, and whether to look inside it)
            fields = blocks[t] = tuple(f for f in _BLOCKS if f in t._fields)
        for field in fields:
            block = getattr(node, field, None)
            if type(block) is not list:
                continue
            for child in block:
                t = type(child)
                if t is ast.Import or t is ast.ImportFrom:
                    out.append(child)
                else:
                    inside = _INSIDE.get(t)
                    if inside is None:
                        inside = _INSIDE[t] = issubclass(t, (ast.stmt, ast.excepthandler)) or t.__name__ == "match_case"
                    if inside:
                        todo.append(child)
    return out


_BLOCKS = ("body", "handlers", "orelse", "finalbody", "cases")
_BLOCK_FIELDS: dict[type, tuple[str, ...]] = {}  # a node type -> which of _BLOCKS it has
_INSIDE: dict[type, bool] = {}  # a node type -> a statement (or handler, match case): looked inside


_LAUNCH_NAMES = ("launch", "spawn")

#: a launch wrapper: (its name, the name of the top-level class it is a method of, the
#: position of its own ``self`` in the launched ``args``; ``""`` and -1 when unknown)
WrapperSelf = tuple[str, str, int]


def launch_wrappers(tree: ast.AST) -> tuple[str, ...]:
    """Names of the functions and methods that pass a parameter of theirs as the launched
    function to ``torch_xla.launch`` / ``xmp.spawn`` (``def launch(self, fn, *args):
    torch_xla.launch(fn, args=args)``): a call of one launches its first argument. Read from
    the tree alone (names the module's torch_xla imports bind), no model needed."""
    return wrapper_facts(tree)[0]


def _single_process_literal(call: ast.Call) -> bool:
    """The launch call runs one process by its own literals (``debug_single_process=True``,
    ``nprocs=1``): a wrapper making it launches no replicas (its launched function is
    found by the project reach, single-process)."""
    for k in call.keywords:
        if type(k.value) is ast.Constant and ((k.arg == "debug_single_process" and k.value.value is True)
                                              or (k.arg == "nprocs" and k.value.value == 1)):
            return True
    return False


def wrapper_facts(tree: ast.AST) -> tuple[tuple[str, ...], tuple[WrapperSelf, ...]]:
    """``(names, selves)``: :func:`launch_wrappers`, and for each of them ``(name, class,
    position)``: for a method of a top-level class that puts its own ``self`` in the
    launched ``args`` tuple (``def launch(self, fn, *args): torch_xla.launch(fn, args=(self,
    *args))``), the class's name and the position of ``self`` in ``args`` (the launched
    function's parameter after the process index at that position receives an instance of
    the class); otherwise (a plain function, ``args`` no tuple display, no ``self`` in it,
    a splat before it) class ``""`` and position -1: what it hands on is unknown."""
    xla: set[str] = set()
    for node in ast.walk(tree):
        if type(node) is ast.Import:
            xla.update((a.asname or a.name.split(".")[0]) for a in node.names if a.name.split(".")[0] == "torch_xla")
        elif type(node) is ast.ImportFrom and not node.level and (node.module or "").split(".")[0] == "torch_xla":
            xla.update(a.asname or a.name for a in node.names)
    if not xla:
        return (), ()
    owner: dict[int, str] = {}  # id(method def) -> its top-level class's name
    for node in getattr(tree, "body", ()):
        if type(node) is ast.ClassDef:
            for item in node.body:
                if type(item) in (ast.FunctionDef, ast.AsyncFunctionDef):
                    owner[id(item)] = node.name
    found: list[str] = []
    selves: list[WrapperSelf] = []
    for node in ast.walk(tree):
        if type(node) not in (ast.FunctionDef, ast.AsyncFunctionDef) or node.name in found:
            continue
        args = node.args
        positional = [a.arg for a in args.posonlyargs + args.args]
        params = set(positional) | {a.arg for a in args.kwonlyargs}
        for call in ast.walk(node):
            if type(call) is not ast.Call:
                continue
            f = call.func
            last = f.attr if type(f) is ast.Attribute else f.id if type(f) is ast.Name else None
            root = f
            while type(root) is ast.Attribute:
                root = root.value
            if last not in _LAUNCH_NAMES or type(root) is not ast.Name or root.id not in xla:
                continue
            target = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "fn"), None)
            if type(target) is ast.Name and target.id in params and not _single_process_literal(call):
                found.append(node.name)
                cls = owner.get(id(node))
                position = None
                if cls is not None and positional and positional[0] == "self" \
                        and not any(type(d) is not ast.Call and chain_parts(d) in (("staticmethod",), ("classmethod",))
                                    for d in node.decorator_list):
                    position = _self_position(call, last)
                selves.append((node.name, cls or "", -1 if position is None else position))
                break
    return tuple(found), tuple(selves)


def _self_position(call: ast.Call, name: str) -> int | None:
    """Where ``self`` sits in the ``args`` tuple display a launch call passes (``args=`` or,
    for ``spawn``, its second positional argument); ``None`` when absent, after a splat, or
    the args are no tuple display."""
    args = next((k.value for k in call.keywords if k.arg == "args"), None)
    if args is None and name in ("spawn", "launch") and len(call.args) > 1:
        args = call.args[1]
    while type(args) is ast.BinOp and type(args.op) is ast.Add:
        args = args.left  # (self,) + tuple(args): the display leads
    if type(args) is not ast.Tuple:
        return None
    for i, elt in enumerate(args.elts):
        if type(elt) is ast.Starred:
            return None
        if type(elt) is ast.Name and elt.id == "self":
            return i
    return None
