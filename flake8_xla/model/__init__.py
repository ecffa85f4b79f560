"""The semantic model of one module, built by one iterative walk of its AST.

Rules never walk the tree themselves: they ask this model (the facade :class:`Model`).
The walk records, for every call, attribute chain, loop, import and assignment, the
context it sits in; everything else is derived from those records on demand and memoised.
One module per question it answers:

- :mod:`.scopes`: scopes, bindings and the context records (``Scope``, ``Ctx``,
  ``FunctionInfo``, ``ClassInfo``, ``LoopInfo``);
- :mod:`.walk`: the one walk that fills them, skipping code that never runs (``if False:``,
  ``if TYPE_CHECKING:``, ``if DEBUG:`` for a module constant ``DEBUG = False`` never rebound:
  ``dead_blocks``, ``in_dead_code``);
- :mod:`.names`: which binding a name means and the canonical dotted name of an import
  chain (``qualname``, ``calls_to``, ``references``);
- :mod:`.values`: values through assignments, literals, call arguments;
- :mod:`.context`: XLA-on and XLA-off code, backend dispatch, version-adaptive code;
- :mod:`.calls`: the call graph, launches and launched code;
- :mod:`.env`: environment reads and writes, torchrun hints;
- :mod:`.training`: optimizers, backward passes and optimizer steps (``scaler.step(opt)``
  too), step loops, the call graph they are found through;
- :mod:`.syncs`: per-step graph cuts (found through helpers), unsynced step loops, syncs
  that split a step, eager mode, the step code after a sync (``post_sync_sites``);
- :mod:`.reductions`: what reduces gradients (the calls, by what they reduce; wrappers,
  SPMD, frameworks);
- :mod:`.loaders`: what a step loop draws its batches from, the loaders feeding step loops,
  whether a loop's data can be seen;
- :mod:`.branches`: which places run in the same pass (``if`` / ``match`` / ``try`` arms);
- :mod:`.tensors`: device and host values, the code that runs once per step;
- :mod:`.options`: the calls the user's options name (in-house reducers and launchers).
- :mod:`.data`: loaders of launched code, their datasets and samplers (sharding);
- :mod:`.parent`: the launching process's code before a launch, SPMD switches.
- :mod:`.replicas`: conditions that can differ between replicas (a rank, a replica's own
  data) and the code reached only under them.
- :mod:`.runtime`: SPMD programs, device expressions, module moves, weight ties, the code
  that runs XLA computations.
- :mod:`.optimizers`: optimizers and the modules they update, DDP/FSDP wraps of those
  modules, loops over device loaders, model constructions.
- :mod:`.placement`: where a trained module lives: modules trained on the host, optimizers
  built before their module moves to the device, the device variable a fix may name.
- :mod:`.attributes`: ``self.`` state across the methods of a class hierarchy, overrides a
  base class's ``self.m()`` may run, what generator functions yield, what loops draw from
  dicts of device tensors (``for k, v in losses.items():``).

Nothing here imports or runs the linted code, torch or torch_xla. Whatever cannot be seen
statically is *unknown* (``None`` / :data:`UNKNOWN`), and rules never fire on unknown.
"""

from __future__ import annotations

import ast

from ..api_table import star_names
from ..settings import Settings
from .attributes import Attributes
from .branches import Branches
from .calls import Calls
from .context import XlaContext
from .data import Data
from .env import Environment
from .loaders import Loaders
from .names import CANONICAL, Names, canonical
from .options import UserNames
from .params import Params
from .parent import ParentCode
from .optimizers import Optimizers
from .placement import Placement
from .reductions import Reductions
from .replicas import Replicas
from .runtime import Runtime
from .syncs import Syncs
from .tensors import Tensors
from .scopes import _GUARDED, UNKNOWN, ClassInfo, Ctx, FunctionInfo, LoopInfo, Scope, Unknown
from .training import Training
from .values import Values
from .walk import Walker, false_constants

__all__ = [
    "CANONICAL", "UNKNOWN", "ClassInfo", "Ctx", "FunctionInfo", "LoopInfo", "Model", "Scope",
    "Unknown", "canonical",
]


class Model(
    Walker, Names, Values, XlaContext, Calls, Environment, Training, Syncs, Reductions, Loaders, Branches,
    Tensors, Data,
    ParentCode, Replicas, UserNames, Runtime, Optimizers, Placement, Attributes, Params,
):
    """Facts about one module. Build with ``Model(tree, settings)``.

    Args:
        tree: the module's ``ast.Module`` (flake8's tree, never modified).
        settings: the run's :class:`~flake8_xla.settings.Settings`.
        project_reached: project mode's ``{qual: multi}`` (``f``, ``Cls.m``): functions of
            this module that launched XLA code of other project modules reaches, ``multi``
            through a multi-process launch (:class:`flake8_xla.project.ProjectFacts`).
        project_launchers: project mode's launch wrappers of imported project modules
            (also in ``settings.launchers``): what a call of one launches is XLA code.
        project_lookup: project mode's ``parts -> HelperFacts | None`` for imported project
            functions (:func:`flake8_xla.project.helper_lookup`), asked by
            :meth:`project_helper`.
        project_callers: project mode's ``qual -> tuple[CallFacts] | None``: what the calls
            in other project modules pass to this module's functions
            (:func:`flake8_xla.project.callers_lookup`), asked by :meth:`project_arguments`.
        project_setup: project mode's :class:`flake8_xla.project.LaunchSetup` of the modules
            whose launched code reaches this one's functions (their gradient reduction,
            process group, SPMD, framework), or ``None``: :meth:`reduces_gradients_elsewhere`,
            :meth:`process_group_possible`, :meth:`uses_spmd` and :meth:`uses_framework` add it.
        project_defs: project mode's ``parts -> DefFacts | None`` (:mod:`flake8_xla.project.defs`):
            the imported project class a dotted chain names is a ``torch.nn.Module`` subclass
            (``TinyLlama`` from ``model.py``; :meth:`project_module_class`), or the function
            returns its argument (:meth:`project_returns_param`).
        project_launcher_selves: project mode's ``(name, (file, "Cls"), position)`` of the
            launch wrappers that are methods handing their own ``self`` to the launched
            function (``TPUBackend.launch``: ``torch_xla.launch(fn, args=(self, *args))``):
            :meth:`param_classes` of the launched function's parameters.
        project_dispatch: project mode's ``{qual: {m: ((file, "Cls.m"), ...)}}``
            (:attr:`flake8_xla.project.ProjectFacts.dispatch`): in a reached method that
            runs only on objects of known classes, what its own ``self.m()`` calls run (an
            override in another module instead of the base's own method).
        _flags: internal: ``(names, uses, untrusted)``, the module constants bound to
            ``False`` / ``0`` that ``if FLAG:`` may be pruned on, the ids of the uses not to
            prune on (a local shadows the constant there), and the names bound by imports of
            project constants (``from config import DEBUG``) not to prune on (``None``: none
            of those); None: every candidate, every use. When the walk
            finds a pruned flag rebound or shadowed, the model is built again trusting only
            the rest, and if that fails too, no flag (literals and ``TYPE_CHECKING`` still
            prune): at most three walks.

    Every query is memoised in ``self._cache`` once the walk is done, so a rule may ask
    the same question per node without re-walking.
    """

    def __init__(self, tree: ast.AST, settings: Settings | None = None, project_reached=None,
                 project_launchers: tuple[str, ...] = (), project_lookup=None, project_callers=None,
                 project_setup=None, project_defs=None, _flags=None, project_launcher_selves=(),
                 project_dispatch=None, project_resolved=None, project_answers=None):
        self.tree = tree
        self.settings = settings or Settings()
        # project mode: {qual: multi} of the functions launched XLA code of other modules reaches
        self.project_reached: dict[str, bool] = dict(project_reached or {})
        # project mode: launch wrappers of imported project modules (a call launches its argument)
        self.project_launchers: tuple[str, ...] = tuple(project_launchers)
        # project mode: dotted chain -> facts about a function of another project module
        self.project_lookup = project_lookup
        # project mode: qual -> what other project modules' calls pass to that function
        self.project_callers = project_callers
        # project mode: what the launching modules that reach this one set up (LaunchSetup)
        self.project_setup = project_setup
        # project mode: dotted chain -> what the light index says of that project class or function
        self.project_defs = project_defs
        # project mode: launch wrappers handing their own self on: (name, (file, "Cls"), position)
        self.project_launcher_selves: tuple = tuple(project_launcher_selves)
        # project mode: {qual: {m: (file, "Cls.m") refs}}: what self.m() runs in reached methods
        self.project_dispatch: dict = dict(project_dispatch or {})
        #: ``{(qual, "chain.method"): refs}``: what the project's reach resolved the method calls
        #: on attribute chains to (:attr:`flake8_xla.project.ProjectFacts.resolved`)
        self.project_resolved: dict = dict(project_resolved or {})
        self._param_aliases: dict[tuple[int, str], str] = {}
        self._attr_aliases: dict[tuple[int, str], str] = {}  # (class id, attr) -> qualname (attributes.py)
        self.module_scope = Scope("module", tree, None)
        self.scopes: list[Scope] = [self.module_scope]  # every scope, in walk order
        self.calls: list[tuple[ast.Call, Ctx]] = []
        self._call_order = [self.calls, None]  # shared by the loops (LoopInfo.calls)
        self.attr_calls: dict[str, list[tuple[ast.Call, Ctx]]] = {}  # x.name(...) by name, walk order
        self.kw_calls: dict[str | None, list[tuple[ast.Call, Ctx]]] = {}  # calls by keyword, walk order
        # outermost attribute chains rooted in a name: (chain, ctx, the root name)
        self.attrs: list[tuple[ast.Attribute, Ctx, str]] = []
        self.import_froms: list[tuple[ast.ImportFrom, ast.alias, str, Ctx]] = []
        self.imports: list[tuple[ast.AST, ast.alias, str, Ctx]] = []
        self.functions: list[FunctionInfo] = []
        self.classes: list[ClassInfo] = []
        self.loops: list[LoopInfo] = []
        self.subscript_loads: list[tuple[ast.Subscript, Ctx]] = []
        self.subscript_stores: list[tuple[ast.Subscript, ast.AST, Ctx]] = []
        self.attr_stores: list[tuple[ast.Attribute, ast.AST, Ctx]] = []  # `a.b.weight = value`
        self.yields: dict[int, list[ast.AST]] = {}  # id(function) -> its own yield / yield from nodes
        self.with_items: list[tuple[ast.AST, Ctx]] = []  # the context expression of each `with` item
        self.compares: list[tuple[ast.Compare, Ctx]] = []
        #: id of the call ``Default()`` of each ``x or Default()`` walked -> ``x`` (project summaries)
        self.or_calls: dict[int, ast.AST] = {}
        self.unpacking_dicts: list[tuple[ast.Dict, Ctx]] = []  # dict displays with a ** entry
        self.tests: list[ast.AST] = []  # the tests of every if, elif, while and conditional expression
        # if tests that guard a torch_xla import: structural key -> (off when true, off when false)
        self.guard_tests: dict[object, tuple[bool, bool]] = {}
        self.chain_off: dict[int, tuple[bool, bool]] = {}  # id(test) of a branch before the XLA elif
        # names that can resolve to a dotted name: bound by an import or aliased from a name
        # or attribute chain (`DDP = torch.nn.parallel.DistributedDataParallel`); any other
        # root (self, locals, params) resolves to nothing without a lookup
        self.resolvable: set[str] = set()
        self.resolvable_values: set[str] = set()  # names bound to a plain value somewhere
        self.name_loads: dict[str, list[Ctx]] = {}  # name -> the contexts it is read in
        self.uses_torch_xla = False
        #: project mode: ``() -> bool | None``, whether some file of the project names torch_xla
        #: (None: unknown); set by the engine, asked by XLA406 only
        self.project_xla_probe = None
        #: project mode: the module's stored answers to the project questions asked most
        #: (:class:`flake8_xla.project.answers.ModuleAnswers`: ``get(name)`` / ``put(name,
        #: value)``, by the index of a call in :attr:`calls` or a function in
        #: :attr:`functions`); set by the engine, ``None`` without the cache
        self.project_answers = project_answers
        #: project mode: ``() -> str | None``, the launching module that imports this one at
        #: module level (:func:`flake8_xla.project.imported_before_launch`; XLA003)
        self.project_import_probe = None
        #: project mode: quals of the module's methods every launched object overrides
        #: (:attr:`flake8_xla.project.ProjectFacts.overridden`): not XLA code
        self.project_overridden = frozenset()
        self._cache: dict = {}
        self._call_names: dict[int, str | None] = {}  # id(call) -> qualified callee (names.py)
        self._chain_names: dict[int, str | None] = {}  # id(attribute chain) -> its qualname (names.py)
        self._resolved: dict[tuple[str, int], str | None] = {}  # (name, id(scope)) -> dotted name (names.py)
        self._walked = False
        self._xla_imports: list = []  # (bound name, ctx) of every torch_xla import
        self._guard_candidates: list = []  # (if test, polarity, ctx) around each torch_xla import
        self._elif_prev: dict[int, ast.AST] = {}  # id(elif test) -> the test before it in its chain
        self._elif_next: dict[int, ast.AST] = {}  # id(test) -> the test of the elif after it
        self.probe_flags: set[str] = set()  # names set True in `try: import torch_xla`
        self._probe_candidates: list = []  # (name, ctx) of those, settled after the walk
        self._dynamic_candidates: list = []  # (call, ctx, bound name) of literal dynamic imports
        self._bound_dynamic: set[int] = set()
        self._hard_tries: list = []  # frame links of try bodies whose except ImportError exits
        self._star_names = _star_imported_names(tree)  # names torch_xla star imports may bind
        self._chain_roots: set[int] = set()
        self.star_uses: list[tuple[ast.Name, Ctx]] = []  # reads of those names
        # id(name read) -> its ctx, for reads under a type or device test (isinstance(x, T), x.device.type)
        self.guarded_reads: dict[int, Ctx] = {}
        # id(the frame test of a literal `case`: its value, or the MatchOr) -> the match subject
        self.case_subjects: dict[int, ast.AST] = {}
        # code that never runs (walk.py): not walked; its spans, for in_dead_code()
        self.dead_blocks: list[tuple[tuple[int, int], tuple[int, int]]] = []
        # flags `if DEBUG:` may be pruned on (DEBUG = False), and the uses a local shadows
        self._false_names, self._shadowed, self._untrusted = \
            (false_constants(tree), frozenset(), frozenset()) if _flags is None else _flags
        self._dead_by_name: list = []  # (flag, ctx, line, id(use)) of each `if DEBUG:` pruned
        self._star_seen = False  # a star import (it may rebind a flag)
        self._walk()
        rebound, shadowed = self._rebound_flags()
        if rebound or shadowed:  # a pruned flag is rebound somewhere: walk again without trusting it
            Model.__init__(self, tree, settings, project_reached, project_launchers, project_lookup,
                           project_callers, project_setup, project_defs,
                           _flags=(self._false_names - rebound, self._shadowed | shadowed, rebound) if _flags is None
                           else (frozenset(), frozenset(), None), project_launcher_selves=project_launcher_selves,
                           project_dispatch=project_dispatch, project_resolved=project_resolved,
                           project_answers=project_answers)
            return
        self._settle_guards()
        self._walked = True
        self.uses_torch_xla = any(
            not any(f is _GUARDED for f in ctx.frames) or bound in self.name_loads
            or (bound == "*" and bool(self.star_uses))  # a star import whose names are read
            for bound, ctx in self._xla_imports
        )  # an import inside `try: import torch_xla ... except ImportError:` that nothing reads is a probe
        self._settle_param_aliases()
        self._settle_attr_aliases()  # (attributes.py) self._xm = xm
        if self._param_aliases or self._attr_aliases:  # answers given before the aliases were known are stale
            self._cache.clear()
            self._call_names.clear()
            self._chain_names.clear()
            self._resolved.clear()

    def has_xla_import(self) -> bool:
        """The module imports torch_xla anywhere (also under a guard, in ``try``, as a probe,
        or by a literal dynamic import): it may register the ``xla`` device."""
        return bool(self._xla_imports)

    def project_names_xla(self) -> bool | None:
        """Project mode: whether some file of this module's project names torch_xla (one
        bytes search per root and process); None when unknown (no project mode, no file)."""
        if "project_xla" not in self._cache:
            probe = self.project_xla_probe
            self._cache["project_xla"] = probe() if probe is not None else None
        return self._cache["project_xla"]

    def stored_calls(self, name: str, ordered: bool = True, extra: int = 0):
        """Project mode: the stored answer ``name`` (:attr:`project_answers`) that is a list of
        indexes of :attr:`calls` (with ``extra``, of ``[index, *flags]``, ``extra`` booleans
        each): ``[(call, ctx, *flags)]``; ``None`` when there is none or it does not fit this
        module's walk (asked again then). ``ordered``: the indexes rise (each call once, in
        walk order); else any order, repeats allowed."""
        answers = self.project_answers
        got = answers.get(name) if answers is not None else None
        if type(got) not in (list, tuple):
            return None
        calls = self.calls
        out = []
        last = -1
        for item in got:
            if extra:
                if type(item) not in (list, tuple) or len(item) != 1 + extra \
                        or any(type(flag) is not bool for flag in item[1:]):
                    return None
                index, flags = item[0], tuple(item[1:])
            else:
                index, flags = item, ()
            if type(index) is not int or not (last if ordered else -1) < index < len(calls):
                return None
            last = index
            out.append((*calls[index], *flags))
        return out

    def call_indexes(self, pairs) -> tuple[int, ...] | None:
        """The indexes in :attr:`calls` of ``(call, ctx)`` pairs, each the walk's own pair (the
        same call in the same context object); ``None`` when one is not."""
        index = self._cache.get("callindex")
        if index is None:
            index = self._cache["callindex"] = {id(call): i for i, (call, _) in enumerate(self.calls)}
        out = []
        for call, ctx in pairs:
            i = index.get(id(call))
            if i is None or self.calls[i][1] is not ctx:
                return None
            out.append(i)
        return tuple(out)

    def store_answer(self, name: str, value) -> None:
        """Keep the computed answer ``name`` (see :meth:`stored_calls`), when the module has a store."""
        if self.project_answers is not None:
            self.project_answers.put(name, value)

    def release(self) -> None:
        """Break the model's reference cycles (a scope's bindings hold contexts that hold
        the scope; a function's and a loop's calls hold contexts that hold the function or
        loop, and so does the walk's call list each loop refers to; a class and its
        methods), so that dropping the model frees it at once by reference counting, leaving
        nothing for the cyclic garbage collector. The model answers nothing afterwards;
        :func:`flake8_xla.engine.run` calls it when its rules are done."""
        for scope in self.scopes:
            scope.bindings.clear()
        for func in self.functions:
            func.calls.clear()
            func.returns.clear()
        for loop in self.loops:
            loop.own.clear()
            loop.inner.clear()
            loop._calls = loop._order = None  # (the walk's call list holds contexts that hold loops)
        self._call_order[1] = None
        for cls in self.classes:
            cls.methods.clear()
            cls.attrs.clear()
        self._cache.clear()

    def calls_in_tests(self) -> set[int]:
        """ids of the calls inside an ``if`` / ``while`` / conditional-expression test: queries
        used only to decide (``if x.index != torch.cuda.current_device():``)."""
        if "calls_in_tests" not in self._cache:
            self._cache["calls_in_tests"] = {
                id(n) for test in self.tests for n in ast.walk(test) if type(n) is ast.Call}
        return self._cache["calls_in_tests"]


def _star_imported_names(tree) -> frozenset[str]:
    """Every name a ``from torch_xla... import *`` of this module may bind (module level,
    in ``if``/``try``/``with`` blocks too: star imports are legal nowhere else)."""
    found: set[str] = set()
    todo = list(getattr(tree, "body", ()))
    while todo:
        stmt = todo.pop()
        t = type(stmt)
        if t is ast.ImportFrom:
            if not stmt.level and stmt.module and stmt.module.split(".")[0] == "torch_xla" \
                    and any(a.name == "*" for a in stmt.names):
                found |= star_names(stmt.module)
        elif t in (ast.If, ast.Try, ast.With) or t.__name__ == "TryStar":
            todo.extend(getattr(stmt, "body", ()))
            todo.extend(getattr(stmt, "orelse", ()))
            todo.extend(getattr(stmt, "finalbody", ()))
            for h in getattr(stmt, "handlers", ()):
                todo.extend(h.body)
    return frozenset(found)
