"""Project mode: what the other modules of the linted file's project say about it.

Beside the per-module model, not inside it. :func:`facts_for` finds the linted file's
project root (:func:`~.files.root_from`); for a module some project module imports (the
reverse-import index, built once per root from the text of import statements), it looks
the module up in the reach index, built once per root: the modules whose text names torch
and a launch are summarised (:mod:`.summary`: parse only, never import or run), and from
each that launches, its launched code is followed across modules. It answers with plain
:class:`ProjectFacts` that the engine hands to the module's model, and
:func:`helper_lookup` answers the model's questions about imported project helpers
(:class:`HelperFacts`), each function's facts combined once across the project. Each module is read and summarised at most once per process (keyed by its
resolved path, size and modification time); import cycles are fine, depths are bounded, a
module that does not parse, or an import that resolves to no project file, is unknown and
makes nothing fire.
"""

from __future__ import annotations

import ast
import dataclasses
import os
import re
import stat
from pathlib import Path

from ..settings import Settings
from ..model.reductions import GRADIENT_REDUCERS, Reductions
from .callers import DEVICE_LOADER, DEVICE_TENSOR, INSTANCE, INSTANCES, PARAM, PARAM_TENSOR, RECV_BATCH, RESULT, TENSOR, \
    PLAIN_LOADER, ArgFacts, CallFacts
from . import answers, cache, constants, defs, findings
from .defs import NOTHING, DefFacts, def_facts
from .files import ROOT_MARKERS, ProjectFiles, read_bytes, read_text
from .summary import LaunchSetup, ModuleSummary, Ref, hold_tree, import_bindings, parse_module, resolve_chain, \
    summarise, wrapper_facts

__all__ = ["EMPTY", "HelperFacts", "LaunchSetup", "ProjectFacts", "callers_lookup", "defs_lookup", "clear_cache", "facts_for", "helper_lookup",
           "launcher_selves_for", "launchers_for", "project_names_xla", "project_uses_xla",
           "summary_of", "with_launchers"]

#: how many (module, function) pairs one launch may reach across modules
MAX_REACH = 50000
#: how many import levels down from a module its launch wrappers are looked for
MAX_WRAPPER_DEPTH = 3

_PROJECTS: dict[Path, ProjectFiles] = {}
_SUMMARIES: dict[tuple, ModuleSummary | None] = {}
_REACHED: dict[tuple, dict[Ref, bool]] = {}
_SELF_CLASSES: dict[tuple, dict[str, dict[str, set]]] = {}
_WRAPPERS: dict[tuple, tuple[tuple[str, ...], tuple]] = {}
_INDEX: dict[tuple, dict[str, dict[str, tuple[bool, str]]]] = {}
_SETUPS: dict[tuple, dict[str, LaunchSetup]] = {}
_LAUNCHERS: dict[tuple, tuple[str, ...]] = {}
_LAUNCHER_SELVES: dict[tuple, tuple[tuple[str, Ref, int], ...]] = {}
_HELPERS: dict[tuple, HelperFacts | None] = {}
_NODES: dict[tuple, object] = {}
_CALLERS: dict[tuple, "_Callers"] = {}
_DISPATCHED: dict[tuple, tuple[CallFacts, ...]] = {}
_ROOTS: dict[str, Path] = {}
_XLA_ROOTS: dict[Path, tuple[Path, ...]] = {}  # root -> the first two files naming torch_xla


@dataclasses.dataclass(frozen=True)
class ProjectFacts:
    """What the project says about one module (immutable; empty when nothing is known).

    Attributes:
        reached: ``{qual: multi}`` for the module's functions that launched XLA code of
            other project modules calls (directly or through the calls it makes); ``multi``
            when a multi-process launch reaches it. Quals are ``f``, ``Cls.m``, ``outer.inner``.
        callers: ``{qual: "train.py"}``: the launching module of each reached function
            (relative to the root), for messages.
        launchers: names of launch wrappers of the project modules this one imports (a
            function or method that hands its parameter to ``torch_xla.launch`` /
            ``xmp.spawn``): a call of one in this module launches its first argument.
        setup: what the launching modules that reach this one set up for their launched
            code (:class:`LaunchSetup`: a gradient-reducing wrapper, a process group, SPMD,
            a framework), combined over them (any one's counts); ``None`` when nothing reaches it.
        launcher_selves: ``(name, class, position)`` of each of ``launchers``
            (:func:`launcher_selves_for`): for a method handing its own ``self`` to the
            launched function, ``backend.launch(_worker, ...)`` gives ``_worker``'s parameter
            ``1 + position`` an instance of ``class`` (a :data:`Ref`); position -1 (class
            ``(file, "")`` for a plain function) when what it hands on is unknown.
        dispatch: ``{qual: {m: targets}}`` for the reached methods that every path reaching
            them runs on an object of a known project class: what their own ``self.m()``
            calls run on those classes (``(file, "Cls.m")`` refs, file ``""`` for the
            module's own; a subclass's override in another module instead of the base's own ``m``). A method missing here, or a
            name missing in its map, is resolved in the module alone.
    """

    reached: dict[str, bool] = dataclasses.field(default_factory=dict)
    callers: dict[str, str] = dataclasses.field(default_factory=dict)
    launchers: tuple[str, ...] = ()
    setup: LaunchSetup | None = None
    launcher_selves: tuple[tuple[str, Ref, int], ...] = ()
    dispatch: dict[str, dict[str, tuple[Ref, ...]]] = dataclasses.field(default_factory=dict)
    #: quals of the module's methods no launch reaches while every object the launches run
    #: their class's other methods on overrides them (a base ``save_checkpoint`` whose TPU
    #: subclass has its own): not XLA code, even in a module that imports torch_xla
    overridden: frozenset = frozenset()
    #: ``{(qual, "chain.method"): (method refs, ...)}``: the methods the reach resolved the
    #: module's method calls on attribute chains to, in XLA code, on the objects it knew
    #: (``trainer.strategy.optimizer_step(optimizer)`` in the fit loop: ``XLAStrategy.optimizer_step``)
    resolved: dict = dataclasses.field(default_factory=dict)


EMPTY = ProjectFacts()


@dataclasses.dataclass(frozen=True)
class HelperFacts:
    """What a function of another project module does, for the rules of its caller.

    Attributes:
        module: its file, relative to the root (for messages).
        qual: ``f`` or ``Cls.m``.
        xla_calls: the torch_xla functions it calls, itself or through the functions it
            calls in any project module (canonical dotted names).
        may_sync: it, or a function it calls, may cut the graph (a sync, or a call that may
            hide one); unknown callees count as may-sync.
        yields_seen: what it returns or yields is visibly no loader (host tensors, numbers).
        steps: it, or a function it calls, runs backward or an optimizer step.
        updates: it, or a function it calls, runs an optimizer update.
        syncs: it, or a function it calls, cuts the graph (a sync, ``barrier=True``).
        param_syncs: ``(index, name)`` of its parameters that sync when given the ``xm``
            module (``xm.optimizer_step(opt, barrier=True)`` on a parameter ``xm``).
        local_master: it returns the local-master test (``return xm.is_master_ordinal()``).
        plain_dataset: a class (not a function): a map-style ``Dataset`` that does not shard.
        saves: how the ``xm.save`` calls it runs (itself or through its callees) pick their
            writers (``FunctionFacts.saves``: ``"default"``, ``"global"``, ``"chosen"``).
        master: the master its return value tests (``"local"`` / ``"global"``), or ``""``.
        moves_param: the index (in its ``def``, ``self`` counts) of the parameter it returns
            moved to the XLA device (``return model.to(self.device())`` asked as a method of
            a class whose ``device()`` returns ``xm.xla_device()``: the class the lookup
            names decides which ``device`` runs); -1 when none or unknown.
        device_attrs: a class (not a function): the ``self.<attr>`` its own methods set to a
            device tensor somewhere (``self.last_loss = loss.detach()`` in the step loop).
        steps_once: its own code runs the backward and an optimizer update once per call,
            in no loop of its own (``train_step(model, opt, x, y)``): a loop calling it is a
            training step loop.
        returns_loader: ``"plain"`` / ``"device"`` when every return of its own gives that
            loader kind (``return DataLoader(ds, sampler=sampler)``), else ``""``.
        self_steps: a method: the ``self.<attr>`` optimizers its own
            ``xm.optimizer_step(self.<attr>)`` calls update (``FunctionFacts.self_steps``).
        returns_wrap: ``"ddp"`` / ``"fsdp"`` when every return of its own gives a module
            wrapped by DDP / XLA FSDP (``return FSDP(model.to(device))``), else ``""``.
        returns_device: every return of its own gives the XLA device (``return
            self._device`` with ``self._device = torch.device("xla", index)``).
        passes_loader: the index (in its ``def``, ``self`` counts) of the parameter every
            return of its own gives back, maybe wrapped in a device loader (``return
            pl.MpDeviceLoader(loader, self.device)``): the caller's argument is what the
            result iterates; -1 when none.
        fed_params: the indexes (in its ``def``, ``self`` counts; for a class, of the
            arguments of the constructor call) of the parameters whose value a training step
            loop of its module draws its batches from (``FunctionFacts.fed_params``).
        returns_sampler: ``"whole"`` / ``"distributed"`` when every return of its own gives
            a sampler of that kind (``return RandomSampler(ds)``), else ``""``.
        shared_effect: what its own code does to a service every host shares (``gsutil``,
            ``wandb.log``), named, or ``""`` (``FunctionFacts.shared_effect``).
        holds_step_loop: a loop of its own runs the step (``def fit(model, loader, opt): for
            x in loader: ...; xm.optimizer_step(opt)``): a loop calling it is an epoch loop.
    """

    module: str
    qual: str
    xla_calls: frozenset[str]
    may_sync: bool
    yields_seen: bool
    steps: bool = False
    updates: bool = False
    syncs: bool = False
    plain_dataset: bool = False
    param_syncs: tuple[tuple[int, str], ...] = ()
    local_master: bool = False
    saves: frozenset[str] = frozenset()
    master: str = ""
    moves_param: int = -1
    device_attrs: frozenset[str] = frozenset()
    steps_once: bool = False
    returns_loader: str = ""
    self_steps: tuple[str, ...] = ()
    returns_wrap: str = ""
    returns_device: bool = False
    passes_loader: int = -1
    fed_params: tuple[int, ...] = ()
    returns_sampler: str = ""
    shared_effect: str = ""
    holds_step_loop: bool = False
    #: the part of ``xla_calls`` that calling it runs: through the functions it calls, not
    #: those it only names (``return functools.partial(_worker, lr)``:
    #: ``FunctionFacts.named_only``); what the rules that fire on "calling it starts the
    #: runtime" read
    runs: frozenset[str] = frozenset()
    #: the indexes (``self`` counts for a method; for a class, of its constructor's
    #: arguments) of the parameters it moves to the XLA device in place
    #: (``FunctionFacts.moved_in_place``: ``Engine(model, optimizer)`` whose ``__init__``
    #: does ``self.model = model.to(self.device)``)
    moves_params: tuple[int, ...] = ()
    #: the indexes (as :attr:`moves_params`) of the parameters a step loop with no per-step
    #: sync iterates unwrapped (``FunctionFacts.unsynced_params``)
    unsynced_params: tuple[int, ...] = ()


def clear_cache() -> None:
    """Forget every project, summary and reach computed in this process."""
    _PROJECTS.clear()
    _SUMMARIES.clear()
    _REACHED.clear()
    _REACHED_CLASSES.clear()
    _REACHED_OBJECTS.clear()
    _IMPORTED_BEFORE.clear()
    _TOP_IMPORTS.clear()
    _REACH_DISPATCHES.clear()
    _REACH_RESOLVED.clear()
    _REACH_CALLS.clear()
    _PARAM_OBJECTS.clear()
    _SELF_CLASSES.clear()
    _WRAPPERS.clear()
    _INDEX.clear()
    _SETUPS.clear()
    _LAUNCHERS.clear()
    _LAUNCHER_SELVES.clear()
    _HELPERS.clear()
    _NODES.clear()
    _CALLERS.clear()
    _INHERITED.clear()
    _INHERITED_WHERE.clear()
    _BY_FILE.clear()
    _STEP_CODE.clear()
    _RESOLVED.clear()
    _FED.clear()
    _OWN_SETUPS.clear()
    _DISPATCHED.clear()
    _IMPORTER_DISPATCHED.clear()
    _SELF_SITES.clear()
    _SELF_SITES_LOCAL.clear()
    _CLASS_METHODS.clear()
    _METHOD_TABLES.clear()
    _REGISTRIES.clear()
    _DISPATCH_FILES.clear()
    _REACHED_CALLS_OF.clear()
    _RUNS.clear()
    _ROOTS.clear()
    _REAL.clear()
    _MARKED.clear()
    defs.clear_cache()
    cache.clear()
    answers.clear()
    _XLA_ROOTS.clear()
    _TEXT_FACTS.clear()
    _VERDICTS.clear()
    _KNOWN_WRAPPERS.clear()
    _MODULE_FILES.clear()
    _FOLDER_ROOTS.clear()
    _NOTHING_FOLDERS[:] = [None, {}]


def _root_of(folder: str) -> Path:
    """The project root of the linted files in ``folder`` (:func:`~.files.root_from`), found
    once per folder and process: every file of a folder asks the same system calls."""
    root = _ROOTS.get(folder)
    if root is None:
        start = Path(_real_folder(folder))
        root = _ROOTS[folder] = _marked_folder(start) or start  # (root_from, its folders' answers kept)
    return root


_REAL: dict[str, str] = {}  # an absolute folder -> its real path (os.path.realpath)


def _real_folder(folder: str) -> str:
    """``os.path.realpath(folder)``, once per folder and process, and one ``lstat`` for a
    folder whose parent's real path is known (a folder that is no symbolic link is its
    parent's real path plus its name): the folders of a big tree share their parents, so
    their real paths cost a system call each, not one per level above them."""
    found = _REAL.get(folder)
    if found is None:
        parent, name = os.path.split(folder)
        if not os.path.isabs(folder) or not name or name in (".", "..") or parent == folder \
                or os.path.islink(folder):
            found = os.path.realpath(folder)
        else:
            found = os.path.join(_real_folder(parent), name)
        _REAL[folder] = found
    return found


_MARKED: dict[str, Path | None] = {}  # a resolved folder -> the nearest folder up holding a root marker


def _marked_folder(start: Path) -> Path | None:
    """The nearest folder from ``start`` (resolved) up holding a root marker, ``None`` when
    none does: :func:`~.files.root_from`'s search, each folder's answer kept for the process
    (the folders of a big tree share their parents: four ``stat`` calls a folder, not four
    per level above it)."""
    chain: list[str] = []
    found: Path | None = None
    for folder in (start, *start.parents):
        key = str(folder)
        if key in _MARKED:
            found = _MARKED[key]
            break
        chain.append(key)
        if any((folder / marker).exists() for marker in ROOT_MARKERS):
            found = folder
            break
    for key in chain:
        _MARKED[key] = found
    return found


def _project(root: Path) -> ProjectFiles:
    found = _PROJECTS.get(root)
    if found is None:
        found = _PROJECTS[root] = ProjectFiles(root)
    return found


def summary_of(path: Path, files: ProjectFiles, settings: Settings) -> ModuleSummary | None:
    """The module's summary, built once per (resolved path, size, mtime_ns, settings)."""
    state = _state(path)
    if state is None:
        return None
    settings = with_launchers(settings, launchers_for(path, files))
    key = (*state, settings)
    if key not in _SUMMARIES:
        _SUMMARIES[key] = None  # an import cycle asking again while this one is built: unknown
        try:
            _SUMMARIES[key] = _summarise(path, files, settings)
        except (Exception, RecursionError):  # a module the model cannot read is unknown, for good
            _SUMMARIES[key] = None
    return _SUMMARIES[key]


def _summarise(path: Path, files: ProjectFiles, settings: Settings) -> ModuleSummary | None:
    """:func:`~.summary.summarise`, through the on-disk cache (:mod:`.cache`) unless it is off."""
    selves = launcher_selves_for(path, files)
    where = cache.folder(files.root) if settings.cache == "on" else None
    entry = None
    if where is not None:
        data = read_bytes(path)
        if data is not None:
            entry = cache.key(path, data, settings, cache.project_digest(files.root, files.files(), files.data), selves)
            found = cache.load(where, entry)
            if found is not cache.MISSING:
                return found
    try:
        found = summarise(path, files, settings, lambda ref: def_facts(ref, files), selves)
    except (RecursionError, MemoryError):
        raise  # (how deep the stack was, how full the memory: not the module's own verdict)
    except Exception:
        # a module the summary cannot read is unknown for good (summary_of): the verdict is
        # kept as a module that does not parse is, so a warm run does not build it again
        if entry is not None:
            cache.store(where, entry, None)
        raise
    if entry is not None:
        cache.store(where, entry, found)
    return found


def _state(path: Path) -> tuple | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return str(path), st.st_size, st.st_mtime_ns


def _wrappers(path: Path, files: ProjectFiles | None = None) -> tuple[tuple[str, ...], tuple]:
    """The module's launch wrappers and the methods among them that hand on their own
    ``self`` (:func:`~.summary.wrapper_facts`), once per file state; only a module whose
    text names torch_xla and a launch is parsed (its text read through ``files`` when given)."""
    state = _state(path)
    if state is None:
        return (), ()
    found = _WRAPPERS.get(state)
    if found is None:
        text = (files.text(path) if files is not None else read_text(path)) or ""
        tree = parse_module(path) if _may_wrap(text) else None
        found = _WRAPPERS[state] = wrapper_facts(tree) if tree is not None else ((), ())
    return found


_HANDS_ON = re.compile(r"\b(?:launch|spawn)\(\s*(?:fn\s*=\s*)?(\w+)\s*[,)]")


_DEF_PARAMS = re.compile(r"def\s+\w+\s*\(([^)]*)")


def _may_wrap(text: str) -> bool:
    """Text pre-filter of :func:`~.summary.launch_wrappers`: torch_xla is named, and some
    ``launch(`` / ``spawn(`` is handed a name that a ``def`` line's parameters also name.
    Two passes over the text (the names the ``def`` lines name, once), linear in its size."""
    if "torch_xla" not in text or ("launch(" not in text and "spawn(" not in text):
        return False  # (the pattern below needs one of them)
    handed = {m.group(1) for m in _HANDS_ON.finditer(text)}
    if not handed:
        return False
    for m in _DEF_PARAMS.finditer(text):
        if handed.intersection(_WORD.findall(m.group(1))):
            return True
    return False


_TEXT_FACTS: dict[Path, tuple[frozenset[str], tuple[str, ...]] | None] = {}


def _text_facts(files: ProjectFiles) -> tuple[frozenset[str], tuple[str, ...]] | None:
    """``(files naming torch_xla, every launch wrapper name of the project)``: one bytes
    search over the project's files, once per root and process, and :func:`_wrappers` of
    the files it finds (only a file naming torch_xla can define one). What every module's
    questions share: a module can import a wrapper only where the project has one, and only
    a file that names torch_xla, or calls a wrapper or an ``xla-launchers`` name, launches.
    ``None`` when the project's files cannot be listed (more than
    :data:`~.files.MAX_FILES`, or none): then nothing is settled from it."""
    root = files.root
    if root in _TEXT_FACTS:
        return _TEXT_FACTS[root]
    listed = files.files()
    found = None
    if listed:
        xla = [p for p in listed if files.mentions(p, b"torch_xla")]  # (as "torch_xla" in its text)
        names: list[str] = []
        known = _KNOWN_WRAPPERS[root] = dict.fromkeys(map(str, listed), ((), ()))  # (no torch_xla: none)
        for p in xla:
            own, selves = known[str(p)] = _wrappers(p, files)
            names.extend(n for n in own if n not in names)
            names.extend(n for n, _, _ in selves if n not in names)
        found = (frozenset(map(str, xla)), tuple(names))
    _TEXT_FACTS[root] = found
    return found


#: root -> {str path: :func:`_wrappers`} of every listed file, from :func:`_text_facts`
_KNOWN_WRAPPERS: dict[Path, dict[str, tuple]] = {}


def _no_wrappers(files: ProjectFiles) -> bool:
    """No file of the project defines a launch wrapper (:func:`_text_facts`): every module's
    :func:`launchers_for` is empty, without reading its imports."""
    facts = _text_facts(files)
    return facts is not None and not facts[1]


def launchers_for(path: Path, files: ProjectFiles) -> tuple[str, ...]:
    """Launch wrappers of the project modules ``path`` imports, up to MAX_WRAPPER_DEPTH levels
    down (once per file and process, like the reach index)."""
    key = (files.root, path)
    if key in _LAUNCHERS:
        return _LAUNCHERS[key]
    if _no_wrappers(files):
        _LAUNCHER_SELVES[key] = ()
        found = _LAUNCHERS[key] = ()
        return found
    _LAUNCHERS[key] = ()
    _LAUNCHER_SELVES[key] = ()
    seen, level, found, selves = {path}, [path], [], []
    known = _KNOWN_WRAPPERS.get(files.root, {})  # (the listed files' wrappers, found once per root)
    for _ in range(MAX_WRAPPER_DEPTH):
        nxt = []
        for p in level:
            for q in sorted(files.imports_of(p)):
                if q not in seen:
                    seen.add(q)
                    nxt.append(q)
                    got = known.get(str(q))
                    names, own = got if got is not None else _wrappers(q, files)
                    found.extend(w for w in names if w not in found)
                    selves.extend((name, (str(q), cls), position) for name, cls, position in own)
        level = nxt
    _LAUNCHERS[key] = tuple(found)
    _LAUNCHER_SELVES[key] = tuple(selves)
    return _LAUNCHERS[key]


def launcher_selves_for(path: Path, files: ProjectFiles) -> tuple[tuple[str, Ref, int], ...]:
    """``(name, (file, "Cls"), position)`` of each launch wrapper :func:`launchers_for`
    finds: a method handing its own ``self`` to the launched function at ``position`` of
    its ``args``, or position -1 when unknown (:func:`~.summary.wrapper_facts`); once per
    file and process."""
    launchers_for(path, files)
    return _LAUNCHER_SELVES.get((files.root, path), ())


def with_launchers(settings: Settings, names: tuple[str, ...]) -> Settings:
    """``settings`` with the project's launch wrappers added to ``launchers`` (``xla-launchers``)."""
    extra = tuple(n for n in names if n not in settings.launchers)
    return dataclasses.replace(settings, launchers=settings.launchers + extra) if extra else settings


def _module_file(filename: str | None, settings: Settings) -> tuple[Path, ProjectFiles] | None:
    """(resolved path, its project's files) of the linted file ``filename``; None when
    project mode is off or ``filename`` is no existing file (stdin, a name a host made up)."""
    if settings.project != "on" or not filename:
        return None
    key = (filename, os.getcwd()) if not os.path.isabs(filename) else filename
    found = _MODULE_FILES.get(key)
    if found is not None:
        return found  # (each lookup of a module asks again: facts, helpers, callers, definitions)
    path = _resolved_file(filename)
    if path is None:
        return None
    found = _MODULE_FILES[key] = (path, _project(_root_of(str(path.parent))))
    return found


def _resolved_file(filename: str) -> Path | None:
    """``Path(filename).resolve()`` when that is a regular file (through links), else
    ``None``: on POSIX, for a path without ``.`` / ``..`` parts, the folder's real path as
    :func:`_real_folder` keeps it plus the name (one ``lstat``; a link to a file is resolved
    on its own), instead of an ``lstat`` per level of the path for every file."""
    absolute = filename if os.path.isabs(filename) else os.path.join(os.getcwd(), filename)
    if os.name != "posix" or any(p in (".", "..") for p in absolute.split("/")):
        path = Path(filename)
        return path.resolve() if path.is_file() else None
    folder, name = os.path.split(absolute)
    real = os.path.join(_real_folder(folder), name)
    try:
        st = os.lstat(real)
        if stat.S_ISLNK(st.st_mode):
            real = os.path.realpath(real)
            st = os.stat(real)
    except (OSError, ValueError):
        return None
    return Path(real) if stat.S_ISREG(st.st_mode) else None


_MODULE_FILES: dict = {}  # the file name as the host gives it -> (resolved path, project files)


def facts_for(filename: str, settings: Settings, plain: bool = False) -> ProjectFacts:
    """The project's facts about the module in file ``filename``.

    Args:
        filename: the linted file's path as the host gives it (relative to the working
            directory or absolute); a path that is no existing file gives :data:`EMPTY`.
        settings: the run's settings (the project's modules are summarised with them).
        plain: the module's text never mentions torch: unless the reach index is built
            already, it is asked only when some project module imports this one (the
            reverse-import index: text only), so such a module never touches the cache.

    Returns:
        :class:`ProjectFacts`; :data:`EMPTY` when project mode is off, or nothing reaches
        the module and it imports no launch wrapper. Never raises for a file it cannot read or parse: that module is unknown.
    """
    if _reaches_nothing(filename, settings):
        return EMPTY
    found = _module_file(filename, settings) if filename and Path(filename).suffix in (".py", ".pyi") else None
    if found is None:
        return EMPTY
    path, files = found
    reached: dict[str, bool] = {}
    callers: dict[str, str] = {}
    setup = None
    # a module nothing imports (an entry script) is reached by no other: asked first for a
    # module that never mentions torch while the reach index is not built, else second
    # (one dictionary lookup: the reverse-import index is then built only for a reached module)
    entry = None
    if not plain or (files.root, settings) in _INDEX or files.importers(path):
        if (files.root, settings) not in _INDEX and reach_verdict(filename, settings) is False:
            return EMPTY  # (the reach verdict a previous run kept: no launch reaches it, the reach is not built)
        entry = _reach_index(files, settings).get(str(path))
    if entry:
        for qual, (multi, caller) in entry.items():
            reached[qual] = multi
            callers[qual] = caller
        setup = _SETUPS.get((files.root, settings), {}).get(str(path)) if reached else None
    own = False
    if setup is None and "torch_xla" in (files.text(path) or ""):  # a launching script: its own setup, with
        _reach_index(files, settings)  # the dropout of another module its launched code builds
        setup = _OWN_SETUPS.get((files.root, settings), {}).get(str(path))
        own = True
    launchers = launchers_for(path, files)
    here = str(path)
    resolved = {(q, k): tuple(sorted(refs)) for (f, q, k), refs in _REACH_CALLS.get((files.root, settings), {}).items()
                if f == here} if reached or own else {}  # (also a launching script's own calls)
    if not reached and not launchers and setup is None and not resolved:
        return EMPTY
    dispatch = _self_dispatch(path, reached, files, settings) if reached else {}
    overridden = _overridden(path, reached, files, settings) if reached else frozenset()
    return ProjectFacts(reached, callers, launchers, setup, launcher_selves_for(path, files), dispatch, overridden,
                        resolved)


def _overridden(path: Path, reached: dict[str, bool], files: ProjectFiles, settings: Settings) -> frozenset:
    """:attr:`ProjectFacts.overridden` of the module at ``path`` whose functions the
    launches reach are ``reached``: for each class some of whose methods (or of its
    subclasses' in the module) are reached, on objects of known classes only
    (:data:`_SELF_CLASSES`, the class itself not among them), its methods that are not
    reached and that each of those classes overrides."""
    s = summary_of(path, files, settings)
    selves = _SELF_CLASSES.get((files.root, settings), {}).get(str(path), {})
    if s is None or not selves:
        return frozenset()
    here = str(path)
    out = set()
    by_name = {c.name: c for c in s.classes}

    def family(name: str) -> set[str]:  # the class and its subclasses in the module
        found = {name}
        for _ in range(4):
            found |= {c.name for c in s.classes if set(c.bases_local) & found}
        return found

    for cls in s.classes:
        prefixes = tuple(n + "." for n in family(cls.name) if n in by_name)
        prefix = cls.name + "."
        seen: set = set()
        for qual in reached:  # (a constructor is reached through super().__init__ on any class)
            if qual.startswith(prefixes) and qual.count(".") == 1 and not qual.endswith(".__init__"):
                seen.update(selves.get(qual, {None}))
        if not seen or None in seen or (here, cls.name) in seen:
            continue
        for m in cls.methods:
            qual = prefix + m
            if qual in reached or m.startswith("__"):
                continue
            if all(((runs := _method_table(k, files, settings).get(m)) and runs[0] != (here, qual))
                   or (not runs and _assigned_first(k, m, files, settings)) for k in seen):
                out.add(qual)  # (every launched class overrides it: a def, or save = _xla_save)
    return frozenset(out)


_FOLDER_ROOTS: dict[str, Path] = {}  # a folder as the host names it -> its project's root


def _reaches_nothing(filename: str | None, settings: Settings) -> bool:
    """The project of ``filename`` is known to give every module :data:`EMPTY`: its reach
    index is built and empty, and it has no launch wrapper (:func:`_text_facts`). Asked
    first for every module (the fast path's modules of a big tree: one dictionary lookup
    per module instead of resolving its path). ``False`` when that is not known yet, or
    for a file that is a symbolic link (its project may be another)."""
    if settings.project != "on" or not filename:
        return False
    memo = _NOTHING_FOLDERS
    given = os.path.dirname(filename)
    key = given if os.path.isabs(filename) else (given, os.getcwd())
    if memo[0] is settings:
        got = memo[1].get(key)
        if got is not None:  # (the folder's verdict, settled: one lookup per module)
            return not _is_link(filename, *got)
    folder = os.path.dirname(os.path.abspath(filename))
    root = _FOLDER_ROOTS.get(folder)
    if root is None:
        root = _FOLDER_ROOTS[folder] = _root_of(folder)  # (_root_of resolves it)
    files = _PROJECTS.get(root)
    if files is None:
        return False
    verdict = _VERDICTS.get((root, settings))
    if not (verdict is not None and verdict[2]) and (  # (the reach verdict a previous run kept says so)
            _INDEX.get((root, settings)) != {} or _TEXT_FACTS.get(root) is None
            or _TEXT_FACTS[root][1] or _SETUPS.get((root, settings)) != {}):
        return False
    if memo[0] is not settings:  # (a verdict once true stays true: the index and text facts are built once)
        memo[:] = [settings, {}]
    memo[1][key] = (files, folder if ".." not in given else None)
    return not _is_link(filename, files, memo[1][key][1])


def _is_link(filename: str, files: ProjectFiles, folder: str | None) -> bool:
    """``os.path.islink(filename)``, from the listing of ``files`` (the project's files, a
    ``scandir`` entry's type each: no system call) when the file is listed there as
    ``folder`` (its folder, absolute) plus its name."""
    found = files.listed_link(os.path.join(folder, os.path.basename(filename))) if folder is not None else None
    return os.path.islink(filename) if found is None else found


#: ``[settings, {folder as the host names it (with the working directory when relative):
#: (its project's files, the folder absolute or None)}]``:
#: the folders whose project :func:`_reaches_nothing` found to give every module EMPTY
_NOTHING_FOLDERS: list = [None, {}]


def lend_tree(filename: str | None, settings: Settings, source: str | None, tree) -> None:
    """The engine lends the project layer the host's ``tree`` of ``source``, the module in
    ``filename`` it lints now (:func:`~.summary.hold_tree`: a summary of that module parses
    nothing again); ``filename=None`` ends the loan. Never raises."""
    if filename is None:
        # (the loan ends with the run: the linted module's import bindings are let go with it,
        # so its tree is freed where the host drops it, not inside the next module's run)
        _LAST_BINDINGS[:] = [None, None, None]
    try:
        found = _module_file(filename, settings) if filename and source is not None else None
        hold_tree(found[0] if found is not None else None, source, tree)
    except (Exception, RecursionError):  # (no loan: the file is parsed as before)
        hold_tree(None)


def _self_dispatch(path: Path, reached: dict[str, bool], files: ProjectFiles,
                   settings: Settings) -> dict[str, dict[str, tuple[Ref, ...]]]:
    """:attr:`ProjectFacts.dispatch` of the module at ``path`` whose reached functions are
    ``reached``: for each method every launch reaches on objects of known classes only, what
    its ``self.m()`` calls run on them."""
    s = summary_of(path, files, settings)
    selves = _SELF_CLASSES.get((files.root, settings), {}).get(str(path), {})
    out: dict[str, dict[str, tuple[Ref, ...]]] = {}
    for qual in reached:
        classes = selves.get(qual)
        f = s.function(qual) if s is not None and classes and None not in classes else None
        if f is None or not f.self_calls:
            continue
        table: dict[str, list[Ref]] = {}
        for cls in sorted(classes):
            methods = _method_table(cls, files, settings)
            for m in f.self_calls:
                for r in methods.get(m, ()):
                    if r not in table.setdefault(m, []):
                        table[m].append(r)
        here = str(path)
        out[qual] = {m: tuple(("", q) if file == here else (file, q) for file, q in refs) for m, refs in table.items()}
    return out


def _relative(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.name


def _reach_index(files: ProjectFiles, settings: Settings) -> dict[str, dict[str, tuple[bool, str]]]:
    """``{file: {qual: (multi, launching module)}}``: every function of the project that
    launched code of another module, or the module level of a torch_xla script, runs. Built
    once per (root, settings): the modules whose text names torch and a launch or a script
    block (torch_xla and ``spawn(`` / ``launch(`` / ``__main__``, a name of ``xla-launchers``
    or of a launch wrapper it imports) are summarised, and from each that launches, its
    launched code is followed across modules, and from a script that launches nothing
    (single device, SPMD), what its module level runs (:func:`_reached_from`). Linear in the project for a bounded number of launching modules."""
    key = (files.root, settings)
    found = _INDEX.get(key)
    if found is not None:
        return found
    words = tuple(f"{n.rsplit('.', 1)[-1]}(" for n in settings.launchers)
    index: dict[str, dict[str, tuple[bool, str]]] = {}
    setups: dict[str, LaunchSetup] = {}
    selves: dict[str, dict[str, set]] = {}
    _INDEX[key] = index  # asked again while building (it is not): nothing reached yet
    _SETUPS[key] = setups  # each reached module: what its launching modules set up, combined
    own = _OWN_SETUPS[key] = {}  # each launching module whose launched code builds dropout elsewhere
    _SELF_CLASSES[key] = selves  # each reached method: the classes of the objects it runs on
    params = _PARAM_OBJECTS[key] = {}  # each reached function's parameters: the objects they hold
    _REACH_DISPATCHES[key] = {}  # (filled by the reach: the dispatches it resolves on objects)
    _REACH_RESOLVED[key] = {}
    _REACH_CALLS[key] = {}
    facts = _text_facts(files)
    xla, wrappers = facts if facts is not None else (None, ())
    called = tuple(f"{n}(" for n in wrappers)
    always = settings.scope == "always"  # (every module is XLA code: no text test but the word's)
    launching: dict[str, tuple[LaunchSetup, tuple[str, ...]]] = {}  # file -> (setup, classes whose method launches)

    def record(path: Path, s: ModuleSummary, setup: LaunchSetup, entry: bool) -> None:
        caller = _relative(path, files.root)
        reached = _reached_from(path, files, settings, entry)
        reached_classes = _REACHED_CLASSES.get((str(path), settings, entry), {})
        for k, v in _REACHED_OBJECTS.get((str(path), settings, entry), {}).items():
            params.setdefault(k, set()).update(v)
        before = setup
        if not setup.device_random and not setup.device_seeded and _builds_dropout(reached, files, settings):
            setup = dataclasses.replace(setup, device_random=True)
        if not setup.spmd and _reaches_spmd(reached, files, settings):
            setup = dataclasses.replace(setup, spmd=True)  # xr.use_spmd() in a helper the program calls
        if not setup.reduces and _reaches_reduction(reached, files, settings):
            setup = dataclasses.replace(setup, reduces=True)  # a ZeRO-1 optimizer a factory builds
        if setup is not before and not entry:
            own[str(path)] = setup  # (the launching module's own: dropout or SPMD of another module)
        mine = _own_launched(s) if not entry else frozenset()
        for (file, qual), multi in reached.items():
            if file == str(path) and not entry and qual.split(".", 1)[0] in mine:
                continue  # the module's own launches are its own model's (an entry script has none);
                # its functions reached only through other modules are the reach's
                # (distributed_utils.call_main(args, main) launching the script's own main)
            old_setup = setups.get(file)
            setups[file] = setup if old_setup is None else old_setup.union(setup)
            selves.setdefault(file, {}).setdefault(qual, set()).update(reached_classes.get((file, qual), {None}))
            entry_ = index.setdefault(file, {})
            old = entry_.get(qual)
            entry_[qual] = (multi or (old is not None and old[0]), old[1] if old is not None else caller)

    for path in files.files():
        if xla is not None and not words and not wrappers and str(path) not in xla:
            continue  # names no torch_xla and can call no launch wrapper (the text test below fails)
        text = files.text(path)
        if text is None:
            continue
        if not ("torch_xla" in text and ("spawn(" in text or "launch(" in text or "__main__" in text)
                and (always or _names_xla_in_code(text))) \
                and not any(w in text for w in words) \
                and not (any(w in text for w in called)
                         and any(f"{n}(" in text for n in launchers_for(path, files))):
            continue  # no launch and no script block in the text: runs no XLA code of other modules
            # (one calling a project's launch wrapper need not name torch: backend.launch(worker);
            # its imports are read only when its text calls a wrapper name of the project)
        imports = bool(files.imports_of(path))
        if not imports and not ("class " in text and _METHOD_LAUNCH.search(text)):
            continue  # imports no project module: its launched code runs nothing of another module
            # (a class of it may launch what another module hands its method: a launcher class)
        s = summary_of(path, files, settings)
        if s is None:
            continue
        methods = tuple(dict.fromkeys(f.qual.split(".", 1)[0] for f in s.functions if f.launches and "." in f.qual))
        if methods:
            launching[str(path)] = (s.setup or LaunchSetup(), tuple(c for c in methods if s.cls(c) is not None))
        if not imports or not (s.launched_multi or s.launched_single or s.launched_out or s.script_roots
                               or s.script_out):
            continue
        record(path, s, s.setup or LaunchSetup(), False)
    if any(c for _, c in launching.values()):
        for path, setup in _entry_scripts(files, launching, xla or frozenset()):
            s = summary_of(path, files, settings)
            if s is not None and s.entry_roots:
                record(path, s, setup, True)
    _keep_verdict(files, settings, index, facts)
    return index


#: (root, settings) -> the reach verdict of the project (:func:`reach_verdict`): (the files some
#: launch reaches or naming torch_xla, whether it has launch wrappers, whether every module's
#: facts are EMPTY: :func:`_reaches_nothing`), or None when there is none to use; read or
#: written once per process
_VERDICTS: dict[tuple, tuple[frozenset, bool, bool] | None] = {}


def _verdict_key(files: ProjectFiles, settings: Settings) -> tuple[Path, str] | None:
    """(cache folder, entry key) of the project's reach verdict, or ``None`` (the cache off)."""
    if settings.cache != "on":
        return None
    where = cache.folder(files.root)
    if where is None:
        return None
    project = cache.project_digest(files.root, files.files(), files.data)
    return where, cache.key(files.root, b"", settings, project, ("reach",), b"")


def _keep_verdict(files: ProjectFiles, settings: Settings, index: dict, facts) -> None:
    """Write the reach verdict of the project whose reach index is ``index`` and whose text
    facts are ``facts`` (:func:`_text_facts`): the files some launch reaches and the files
    naming torch_xla, and whether the project has launch wrappers (a module importing one has
    its own facts: :func:`launchers_for`); none when its files cannot be listed. Never raises."""
    memo = (files.root, settings)
    if memo in _VERDICTS:
        return
    try:
        if facts is None:
            _VERDICTS[memo] = None
            return
        maybe = frozenset(index) | facts[0]
        wrappers = bool(facts[1])
        nothing = not index and not wrappers and not _SETUPS.get(memo)  # (as _reaches_nothing asks)
        _VERDICTS[memo] = (maybe, wrappers, nothing)
        found = _verdict_key(files, settings)
        if found is not None:
            cache.store_reached(found[0], found[1], maybe, wrappers, nothing)
    except (Exception, RecursionError):  # (no verdict: each module asks the reach)
        _VERDICTS[memo] = None


def imported(filename: str, settings: Settings) -> bool:
    """Some project module imports the module in ``filename`` (the reverse-import index: text
    only), as :func:`facts_for` asks it of a module that never mentions torch (``True`` once the
    reach is built: it is asked then, the reverse index is not needed); ``False`` also when
    the project is known to give every module :data:`EMPTY` (:func:`_reaches_nothing`).
    Never raises."""
    try:
        if _reaches_nothing(filename, settings):
            return False  # (its facts are EMPTY whoever imports it: the reverse index is not built)
        found = _module_file(filename, settings)
        if found is None:
            return False
        path, files = found
        return (files.root, settings) in _INDEX or bool(files.importers(path))  # (as facts_for asks)
    except (Exception, RecursionError):
        return False


def reach_verdict(filename: str, settings: Settings) -> bool | None:
    """For a module whose text mentions torch but not torch_xla (it needs no walk of its own):
    ``False`` when its project facts are known to be :data:`EMPTY` without building the reach
    (:func:`facts_for`), from the project's reach verdict a previous run kept (the files some
    launch reaches and the files naming torch_xla, keyed like a summary by the project's
    files and the settings, and whether the project has launch wrappers: then a module
    importing one, :func:`launchers_for`, has facts too); ``True`` when they may be any; ``None`` when there is no verdict (the cache off, none kept:
    ask :func:`facts_for`). Asked of a module that never mentions torch only where
    :func:`facts_for` would build the reach for it (a project module imports it). Never raises."""
    try:
        if _reaches_nothing(filename, settings):
            return False  # (the folder's verdict, settled: one lookup per module)
        found = _module_file(filename, settings)
        if found is None:
            return None
        path, files = found
        memo = (files.root, settings)
        if memo not in _VERDICTS:
            if memo in _INDEX:
                return None  # (built in this process, before the cache was on: ask it)
            key = _verdict_key(files, settings)
            got = cache.load_reached(*key) if key is not None else cache.MISSING
            if got is cache.MISSING:
                return None  # (the reach writes it when it is built)
            _VERDICTS[memo] = got
        verdict = _VERDICTS[memo]
        if verdict is None:
            return None
        maybe, wrappers, _ = verdict
        return str(path) in maybe or (wrappers and bool(launchers_for(path, files)))
    except (Exception, RecursionError):
        return None


def _names_xla_in_code(text: str) -> bool:
    """``torch_xla`` occurs in ``text`` somewhere other than a comment: some occurrence has
    no ``#`` before it on its line, or a quote before that ``#`` (it may be in a string).
    A module whose every mention is a comment (``# like torch_xla::...`` in torch's code
    generator) is read by the model as one that never names torch_xla: it imports none,
    statically or by a literal dynamic import, so it launches nothing and is no torch_xla
    script (an occurrence after a ``#`` inside a multi-line string is no module name either)."""
    find = text.find
    i = find("torch_xla")
    while i >= 0:
        head = text[text.rfind("\n", 0, i) + 1:i]
        h = head.find("#")
        if h < 0 or "'" in head[:h] or '"' in head[:h]:
            return True
        i = find("torch_xla", i + 9)
    return False


def _own_launched(s: ModuleSummary) -> frozenset:
    """The module's functions its own model takes as launched or script code: its launched
    functions and module-level calls (``launched_multi`` / ``launched_single`` /
    ``script_roots``) and the module functions they call, by their top-level name."""
    roots = list(s.launched_multi) + list(s.launched_single) + list(s.script_roots)
    seen: set = set()
    while roots:
        q = roots.pop()
        if q in seen:
            continue
        seen.add(q)
        f = s.function(q)
        if f is not None:
            roots.extend(f.calls_local)
    return frozenset(q.split(".", 1)[0] for q in seen)


#: a ``spawn(`` / ``launch(`` call indented as a method's body is (a launcher class's own launch)
_METHOD_LAUNCH = re.compile(r"^(?:        |\t\t)[^\n#]*\b(?:spawn|launch)\(", re.M)
#: an import statement of torch_xla at the start of a line (:func:`_entry_scripts`' text test)
_IMPORTS_XLA = re.compile(r"^[ \t]*(?:import|from)[ \t]+torch_xla\b", re.M)


def _entry_scripts(files: ProjectFiles, launching: dict, xla: frozenset) -> list:
    """``[(path, setup)]``: the scripts (a ``__main__`` block, no torch_xla) whose text names
    a class whose own method launches XLA code, or a subclass of one another module defines
    (``XLATrainer(...)`` and ``trainer.fit(...)``): their module-level code may reach the
    launch with the objects it builds; ``setup`` joins the launching modules' setups."""
    names: dict[str, LaunchSetup] = {}
    for setup, classes in launching.values():
        for c in classes:
            names[c] = setup if c not in names else names[c].union(setup)
    texts = {str(p): files.text(p) or "" for p in files.files()}
    for _ in range(2):  # subclasses, two levels down (class TPUTrainer(XLATrainer): ...), and
        # classes whose body builds one (self.launcher = XLALauncher(self) in XLAStrategy)
        for p, text in texts.items():
            if "class " not in text:
                continue
            heads = None
            for c, setup in list(names.items()):
                if c in text:
                    for m in re.finditer(r"^\s*class\s+(\w+)\s*\([^)]*\b%s\b" % re.escape(c), text, re.M):
                        names.setdefault(m.group(1), setup)
                    for m in re.finditer(r"\b%s\(" % re.escape(c), text):
                        if heads is None:
                            heads = [(h.start(), h.group(1)) for h in re.finditer(r"^class\s+(\w+)", text, re.M)]
                        owner = [n for at, n in heads if at < m.start()]
                        if owner and owner[-1] != c and text[text.rfind("\n", 0, m.start()) + 1:m.start()][:1] in " \t":
                            names.setdefault(owner[-1], setup)  # (a top-level class whose indented body names it)
    out = []
    for p in files.files():
        text = texts.get(str(p), "")
        if "__main__" not in text or (str(p) in xla or "torch_xla" in text) and _IMPORTS_XLA.search(text):
            continue  # (a torch_xla script is its own launcher; a docstring naming torch_xla is no import)
        setups = [setup for c, setup in names.items() if re.search(r"\b%s\b" % re.escape(c), text)]
        if not setups:  # env = get_env(cfg): a module it imports (two links on) launches
            setups = _imported_launching(p, files, launching)
        if setups and files.imports_of(p):
            setup = setups[0]
            for other in setups[1:]:
                setup = setup.union(other)
            out.append((p, setup))
    return out


def _imported_launching(path: Path, files: ProjectFiles, launching: dict) -> list:
    """The setups of the launching modules (``launching``: file -> (setup, classes)) the module
    at ``path`` imports, directly or through the modules it imports, three links deep (a
    factory module whose function imports the TPU environment: ``get_env(cfg)``)."""
    todo, seen, found = [(path, 0)], {path}, []
    while todo:
        p, d = todo.pop()
        for q in files.imports_of(p):
            if q in seen:
                continue
            seen.add(q)
            got = launching.get(str(q))
            if got is not None and got[1]:
                found.append(got[0])
            if d < 2:
                todo.append((q, d + 1))
    return found


#: torch_xla names whose call puts the program in SPMD mode (the model's ``uses_spmd``)
_SPMD_NAMES = ("torch_xla.runtime.use_spmd", "torch_xla.distributed.spmd", "torch_xla.experimental.xla_sharding")


def _reaches_spmd(reached: dict[Ref, bool], files: ProjectFiles, settings: Settings) -> bool:
    """Some function the program runs (a launch's, or a script's module level) calls
    ``xr.use_spmd()`` or an SPMD API (``xs.mark_sharding``, ``xs.Mesh``): the whole program
    runs in SPMD mode (a ``setup_spmd()`` helper of another module)."""
    for ref in reached:
        f = _function_facts(ref, files, settings)
        if f is not None and any(q.startswith(_SPMD_NAMES) for q in f.xla_calls):
            return True
    return False


def _reaches_reduction(reached: dict[Ref, bool], files: ProjectFiles, settings: Settings) -> bool:
    """Some function the launched code runs reduces the gradients or builds what does: it
    calls ``xm.reduce_gradients`` or builds an XLA FSDP / ZeRO-1 wrapper
    (``build_optimizer`` returning ``ZeroRedundancyOptimizer(...)`` in a factory module), or
    every ``return`` of it gives a DDP / FSDP-wrapped module (``shard(model)``): the program's
    gradients are reduced (:attr:`LaunchSetup.reduces`, as the launching module's own model
    says of the same calls in its own code)."""
    prefixes = GRADIENT_REDUCERS + tuple(w for w in Reductions.REDUCING_WRAPPERS if w.startswith("torch_xla"))
    for ref in reached:
        f = _function_facts(ref, files, settings)
        if f is not None and (f.returns_wrap or any(q.startswith(prefixes) for q in f.xla_calls)):
            return True
    return False


def _builds_dropout(reached: dict[Ref, bool], files: ProjectFiles, settings: Settings) -> bool:
    """Some class whose ``__init__`` the launched code reaches uses dropout (``ClassFacts.dropout``),
    and some reached function trains (``FunctionFacts.steps``: dropout in a program that only
    evaluates draws nothing)."""
    dropout = trains = False
    for file, qual in reached:
        s = summary_of(Path(file), files, settings)
        if s is None:
            continue
        head, _, tail = qual.partition(".")
        if tail == "__init__" and not dropout:
            cls = s.cls(head)
            dropout = cls is not None and cls.dropout
        if not trains:
            f = s.function(qual)
            trains = f is not None and f.steps
        if dropout and trains:
            return True
    return False


def _reached_from(launcher: Path, files: ProjectFiles, settings: Settings, entry: bool = False) -> dict[Ref, bool]:
    """Every (file, qual) the launched code of module ``launcher`` runs, across modules,
    with whether a multi-process launch runs it (computed once per launcher).

    A method is reached with the class of the object it runs on when that is known (a
    constructor call of a project class, ``Cls.m`` on a receiver whose class is known):
    its own ``self.m()`` calls then run what that class resolves ``m`` to (a subclass's
    override of another module, not the base's body: class-hierarchy dispatch narrowed to
    the classes the launched code builds). The classes each method is reached with are in
    :data:`_REACHED_CLASSES` (``None`` among them: some path reached it on an object of
    unknown class).

    ``entry``: ``launcher`` is a script that uses no torch_xla (``ModuleSummary.entry_roots``):
    its module-level code is followed on the host, and what a launch in the code it reaches
    starts (a framework's ``XLATrainer.launch``) is the launched code, with the objects the
    script built and handed on (:func:`_dispatched_callees`)."""
    key = (str(launcher), settings, entry)
    if key in _REACHED:
        return _REACHED[key]
    _REACHED[key] = {}
    _REACHED_CLASSES[key] = {}
    s = summary_of(launcher, files, settings)
    reached: dict[Ref, bool] = {}
    classes: dict[Ref, set] = {}
    objects: dict[tuple, set] = {}  # (file, qual, parameter) -> the object values it held in XLA code
    contexts: dict[tuple, set] = {}
    seen: set = set()
    if s is not None:
        if entry:
            host = [((str(launcher), q), None, (), None) for q in s.entry_roots]
            groups = ((host, None),)
        else:
            script = [(n, c, x, None) for r in s.script_out for n, c in _targets(r, files, settings)
                      for x in _script_contexts(s, r, n, c, files, settings)]
            launch_contexts: dict[str, list] = {}
            for q, context in s.launch_contexts:
                launch_contexts.setdefault(q, []).append(context)
            out_multi, out_single = ([(n, c, _launch_context(n, c, passes, files, settings), None)
                                      for r, m, passes in s.launched_out if m is want
                                      for n, c in _targets(r, files, settings)]
                                     for want in (True, False))  # an imported function launched
            groups = tuple(([((str(launcher), q), None, c, None) for q in roots for c in launch_contexts.get(q, [()])]
                            + list(more), multi)
                           for roots, multi, more in ((s.launched_multi, True, out_multi),
                                                      (s.launched_single, False, out_single),
                                                      (s.script_roots, False, script)))  # a script: its module level's calls too
        for todo, start in groups:
            todo = [(n, c, x, start if launch is None else launch) for n, c, x, launch in todo]
            while todo and len(seen) < MAX_REACH:
                node, cls, context, multi = todo.pop()  # multi: None on the host (before a launch)
                known = contexts.setdefault((node, multi is None), set())
                if context not in known and len(known) >= constants.MAX_CONTEXTS:
                    context = ()  # too many: what it is called with is unknown
                if (node, cls, context, multi) in seen or (node, cls, context, True) in seen:
                    continue
                seen.add((node, cls, context, multi))
                known.add(context)
                if multi is not None:
                    reached[node] = multi or reached.get(node, False)
                    classes.setdefault(node, set()).add(cls)
                    for name, value in context:
                        if value[0] in constants.OBJECTS and "." not in name:
                            objects.setdefault((node[0], node[1], name), set()).add(value)
                            if value[0] == "obj" and value[2]:  # what its constructor was handed, kept
                                for init in _method_table(value[1], files, settings).get("__init__", ())[:1]:
                                    for p, v in value[2]:
                                        if v[0] in constants.OBJECTS:
                                            objects.setdefault((init[0], init[1], p), set()).add(v)
                for n, c, x, launch in _dispatched_callees(node, cls, context, files, settings, multi is None):
                    todo.append((n, c, x, multi if launch is None else (launch or bool(multi))))
    _REACHED[key] = reached
    _REACHED_CLASSES[key] = classes
    _REACHED_OBJECTS[key] = objects
    return reached


#: (root, settings) -> method ref -> ``{(file, DispatchFacts)}``: the dispatched calls the reach
#: resolved to that method on an object it knew (:func:`_object_callees`)
_REACH_DISPATCHES: dict[tuple, dict[Ref, set]] = {}
#: (root, settings) -> (file, caller, loop line) -> the methods the reach resolved the dispatches
#: in that loop to
_REACH_RESOLVED: dict[tuple, dict[tuple, set]] = {}


def _loop_updates(file: str, d, files: ProjectFiles, settings: Settings) -> bool:
    """A loop around dispatch ``d`` of module ``file`` is a training step loop because a
    method the reach resolved a dispatch directly in that loop to updates the optimizer
    (``self.strategy.optimizer_step(opt)`` on the handed ``XLAStrategy``)."""
    resolved = _REACH_RESOLVED.get((files.root, settings), {})
    for loop in d.loops:  # (the call may sit in an inner loop: for cb in self.callbacks)
        for r in resolved.get((file, d.caller, loop), ()):
            f = _function_facts(r, files, settings)
            if f is not None and f.updates:
                return True
    return False
#: (root, settings) -> (file, caller qual, "chain.method") -> the methods the reach resolved a method
#: call on an attribute chain to (``self.strategy.optimizer_step`` on the launched ``XLAStrategy``)
_REACH_CALLS: dict[tuple, dict[tuple, set]] = {}
#: (launcher, settings, entry) -> (file, qual, parameter) -> the object values the reach saw it hold
_REACHED_OBJECTS: dict[tuple, dict[tuple, set]] = {}
#: (root, settings) -> the same, over every launch of the project (:func:`_reach_index`)
_PARAM_OBJECTS: dict[tuple, dict[tuple, set]] = {}


_REACHED_CLASSES: dict[tuple, dict[Ref, set]] = {}


def _dispatched_callees(node: Ref, cls: Ref | None, context: tuple, files: ProjectFiles,
                        settings: Settings, host: bool = False) -> list:
    """``[(callee, class of its self or None, its context, launch)]`` of function ``node``
    run on an instance of ``cls`` (``None``: unknown) with what is known of its parameters
    ``context`` (:mod:`.constants`: literal constants, and object values: the instance one
    constructor call built, with what that call passed); ``launch`` is ``None`` for a call,
    else whether a multi-process launch starts the callee.

    - its own ``self.m()`` calls resolve on ``cls`` (:func:`_class_methods`, override first),
      on the same object;
    - its other calls as the module resolves them; a callee whose every occurrence is under
      an ``if`` the context makes false is not run (``get_backend("tpu")`` builds no
      ``CudaBackend``); a call passes its constants and objects on (a constructor call: to
      ``__init__``, and the object it builds to every method);
    - a method call on an object a parameter holds, or a constructor parameter the object
      kept (``trainer._run(...)``, ``for cb in self.callbacks: cb.on_step_end(...)``: the
      module's :class:`~.callers.DispatchFacts`), resolves on that object's class;
    - on the host (``host``: before a launch) building an object runs its ``__init__`` only,
      not every method as in launched code;
    - a launch in its code starts the launched function with what ``args=(...)`` passes."""
    file, qual = node
    s = summary_of(Path(file), files, settings)
    f = s.function(qual) if s is not None else None
    if f is None:
        return []
    known = dict(context)
    edges = dict(f.edges) if f.edges else {}
    me = f.params[0] if cls is not None and f.params else None
    this = known.get(me) if me is not None else None  # the object the method runs on, when built where seen
    out: list = []

    def objects(arg, ctx) -> tuple | None:
        return _object_value(arg, ctx, files, settings)

    def bound(t: Ref, c, args, method: bool) -> tuple:
        callee = _function_facts(t, files, settings)
        if callee is None:
            return ()
        return constants.frozen(constants.bind(args, known, callee.params, 1 if method else 0, objects,
                                               callee.varargs))

    def follow(key, targets) -> None:
        ctor = type(key) is tuple and "." not in key[1]  # Cls(...): its __init__ gets the arguments
        if host and ctor:  # on the host only what is called runs: building an object runs __init__
            targets = [(t, c) for t, c in targets if c is None or t[1].endswith(".__init__")]
        sites = edges.get(key)
        if sites is None:
            out.extend((t, c, (), None) for t, c in targets)
            return
        for conds, args in sites:
            if not constants.holds(conds, known):
                continue  # this occurrence does not run here
            obj = None
            if ctor and args:
                inits = [t for t, c in targets if c is not None and t[1].endswith(".__init__")]
                init = bound(inits[0], None, args, True) if inits else ()
                obj = ("obj", targets[0][1], init) if targets and targets[0][1] is not None else None
            for t, c in targets:
                if obj is not None:
                    callee = _function_facts(t, files, settings)
                    given = dict(init) if t[1].endswith(".__init__") else {}
                    if callee is not None and callee.params:
                        given[callee.params[0]] = obj
                    out.append((t, c, constants.frozen(given), None))
                elif args and (c is None or not ctor):
                    out.append((t, c, bound(t, c, args, c is not None), None))
                else:
                    out.append((t, c, (), None))

    dispatched = cls is not None and bool(f.self_calls)
    own = set(f.self_local) if dispatched else ()
    for q in f.calls_local:
        if q not in own:
            follow(q, [((file, q), None)])
    if dispatched:  # (also a hook the base only declares elsewhere: no local target at all)
        table = _method_table(cls, files, settings)
        for m in f.self_calls:
            targets = table.get(m, ())
            sites = edges.get("self." + m)
            if this is None and sites is None:
                out.extend((r, cls, (), None) for r in targets)
                continue
            for conds, args in sites or (((), ()),):
                if not constants.holds(conds, known):
                    continue
                for r in targets:
                    given = dict(bound(r, cls, args, True)) if args else {}
                    callee = _function_facts(r, files, settings)
                    if this is not None and callee is not None and callee.params:
                        given[callee.params[0]] = this
                    out.append((r, cls, constants.frozen(given), None))
    if f.super_calls:  # super().m(): the bases' m, on the same object
        head = qual.rpartition(".")[0]
        for m in f.super_calls:
            found = _super_method((file, head), cls, m, files, settings)
            if found is not None:
                out.append((found, cls, (), None))
    unbuilt = set(f.unbuilt)
    for ref in f.calls_out:
        targets = _targets(ref, files, settings)
        if ref in unbuilt:  # named, not built here: the object it runs on is of unknown class
            targets = [(t, None) for t, _ in targets]
        follow(ref, targets)
    for key, sites in edges.items():
        if type(key) is not str:
            continue
        if key.startswith("param:"):  # main(cfg) of a parameter holding a function a caller handed in
            value = known.get(key[6:])
            if value is None or value[0] != "fn":
                continue
            for t, c in _targets(value[1], files, settings):
                if c is not None and len(value) < 3:
                    continue  # (a class handed in: its constructor is not followed here)
                for conds, args in sites:
                    if constants.holds(conds, known):
                        out.append(_run_value(value, t, c, args, known, objects, files, settings))
        elif key.startswith("recv:"):  # self.strategy.launcher.launch(...): on the object the chain holds
            method = key.rpartition(".")[2]
            for conds, args in sites:
                if not args or args[0][0] != -1 or not constants.holds(conds, known):
                    continue
                obj = constants._value(args[0][2], known, objects)
                for o in (obj[1] if obj is not None and obj[0] == "any" else (obj,)):
                    if o is None or o[0] != "obj" or _assigned_first(o[1], method, files, settings):
                        continue
                    table = _method_table(o[1], files, settings)
                    found = table.get(method, ()) or (table.get("forward", ()) if method == "__call__" else ())
                    for t in found[:1]:  # (model(x): the class's __call__, else a module's forward)
                        if not host:  # (what the module's rules ask of XLA code: resolved)
                            _resolved_call(file, qual, key, s, t, files, settings)
                        out.append(_run_value(("fn", t, o), t, o[1], args, known, objects, files, settings))
    if any(v[0] in constants.OBJECTS for v in known.values()):
        _object_callees(s, f, node, cls, known, me, objects, files, settings, out)
    for target, multi, args, splat in f.launches:
        if type(target) is str:
            ref = (file, target)
        elif not target[0]:  # torch_xla.launch(fn, ...): the function the context says fn holds
            value = known.get(target[1])
            if value is None or value[0] != "fn":
                continue
            ref = value[1]
        else:
            ref = target
        items = known.get(splat) if splat else None  # args=args: the *args tuple the caller filled
        bound = value[2] if type(target) is not str and not target[0] and len(value) > 2 else None
        for t, c in _targets(ref, files, settings):
            callee = _function_facts(t, files, settings)
            offset = 1
            if c is not None:  # xmp.spawn(self._wrapping_function, ...): a method of the object it runs on
                if callee is None or not callee.params or (bound is None and (this is None or type(target) is not str)):
                    continue  # (xmp.spawn(function, ...) of a bound method a caller handed in: on its object)
                offset = 2
            given = constants.bind(args, known, callee.params, offset, objects, callee.varargs) if callee is not None else {}
            if callee is not None and items is not None and items[0] == "tuple":
                for i, v in enumerate(items[1]):
                    if v is not None and i + offset < len(callee.params):
                        given[callee.params[i + offset]] = v
            if c is not None:
                given[callee.params[0]] = bound if bound is not None else this
            out.append((t, c, constants.frozen(given), multi))
    return _told_apart(out)


def _resolved_call(file: str, qual: str, key: str, s: ModuleSummary, t: Ref, files: ProjectFiles,
                   settings: Settings) -> None:
    """Record that the reach resolved the method calls on an attribute chain of ``qual`` under
    edge ``key`` (``"recv:trainer.strategy.optimizer_step"``) to method ``t`` in XLA code:
    for the calling module's rules (:data:`_REACH_CALLS`), for ``t``'s callers as dispatched
    calls (:data:`_REACH_DISPATCHES`, the module's :class:`~.callers.DispatchFacts` of that
    key) and for the loops around them (:data:`_REACH_RESOLVED`)."""
    root = (files.root, settings)
    _REACH_CALLS.setdefault(root, {}).setdefault((file, qual, key[5:]), set()).add(t)
    for d in s.dispatches:
        if d.param == key and d.caller == qual and not d.origin:
            _REACH_DISPATCHES.setdefault(root, {}).setdefault(t, set()).add((file, d))
            if d.loops:
                _REACH_RESOLVED.setdefault(root, {}).setdefault((file, d.caller, d.loops[-1]), set()).add(t)


def _told_apart(out: list) -> list:
    """``out`` (:func:`_dispatched_callees`' callees) with each context holding one of several
    objects (``("any", values)``) followed once per object, at most
    :data:`.constants.MAX_CONTEXTS` per callee (past that, the parameter is unknown)."""
    if not any(x and any(v[0] == "any" for _, v in x) for _, _, x, _ in out):
        return out
    told = []
    for t, c, x, launch in out:
        if not x or not any(v[0] == "any" for _, v in x):
            told.append((t, c, x, launch))
            continue
        told.extend((t, c, constants.frozen(combo), launch) for combo in _per_choice(x)[0])
    return told


def _per_choice(context: tuple) -> tuple[list[dict], bool]:
    """``(contexts, left out)``: one context per combination of the objects the ``("any",
    values)`` of frozen ``context`` may be, at most :data:`.constants.MAX_CONTEXTS`; a choice
    past that bound is left out (its parameter unknown) and ``left out`` is true."""
    combos = [{k: v for k, v in context if v[0] != "any"}]
    left_out = False
    for k, v in context:
        if v[0] != "any":
            continue
        if len(combos) * len(v[1]) > constants.MAX_CONTEXTS:
            left_out = True
            continue
        combos = [{**combo, k: m} for combo in combos for m in v[1]]
    return combos, left_out


def _run_value(value: tuple, t: Ref, c, args: tuple, known: dict, objects, files: ProjectFiles,
               settings: Settings) -> tuple:
    """``(callee, class, context, None)`` for a call of function value ``value`` (``("fn",
    ref)``, or ``("fn", method, obj)`` bound to an object: ``self._run`` handed on, then
    ``function(*args)``) that runs ``t``, with what the call passes (``args``, positions
    after the bound ``self``)."""
    callee = _function_facts(t, files, settings)
    if callee is None:
        return (t, c, (), None)
    method = len(value) > 2 and bool(callee.params)
    given = constants.bind(args, known, callee.params, 1 if method else 0, objects, callee.varargs) if args else {}
    if method:
        given[callee.params[0]] = value[2]
        c = value[2][1]
    return (t, c, constants.frozen(given), None)


def _script_contexts(s: ModuleSummary, key: Ref, ref: Ref, cls, files: ProjectFiles, settings: Settings) -> list:
    """The contexts a torch_xla script's module-level calls of ``key`` give its target function
    ``ref`` (``distributed_utils.call_main(p.parse_args(), main)`` in the ``__main__`` block:
    ``main`` a function value): one per call site the module level's facts keep
    (``ModuleSummary.entry``), ``[()]`` when none or for a class."""
    sites = dict(s.entry.edges).get(key) if s.entry is not None and s.entry.edges and cls is None else None
    callee = _function_facts(ref, files, settings) if sites else None
    if not sites or callee is None:
        return [()]
    return list(dict.fromkeys(constants.frozen(constants.bind(args, {}, callee.params, 0, None, callee.varargs))
                              for conds, args in sites if constants.holds(conds, {})))[:constants.MAX_CONTEXTS] or [()]


def _launch_context(ref: Ref, cls, passes: tuple, files: ProjectFiles, settings: Settings) -> tuple:
    """The context a launch's literal ``args=(...)`` gives the imported function ``ref`` it
    launches (its first parameter is the process index); ``()`` for a class or none."""
    if not passes or cls is not None:
        return ()
    callee = _function_facts(ref, files, settings)
    return constants.frozen(constants.bind(passes, {}, callee.params, 1)) if callee is not None else ()


def _function_facts(ref: Ref, files: ProjectFiles, settings: Settings):
    """The :class:`~.summary.FunctionFacts` of ``(file, qual)`` in its module's summary, or
    ``None`` (no summary, no such function)."""
    s = summary_of(Path(ref[0]), files, settings)
    return s.function(ref[1]) if s is not None else None


def _object_value(arg: tuple, known: dict, files: ProjectFiles, settings: Settings, depth: int = 0):
    """The context value of a ``("new", class, passes)`` / ``("news", items)`` argument
    (:func:`.summary._summary`'s ``new``): ``("obj", class, the context of its __init__)``,
    ``("objs", values)``; of an attribute chain on an object the context holds
    (``("chain", "self.strategy.launcher")``, ``("get", receiver, "launcher")``:
    :func:`_attribute`); ``None`` when the class is not found or the value is unknown."""
    if depth > 4:
        return None
    kind = arg[0]
    if kind == "ret":  # what a call returns: the argument a function gives back as the same object
        return _returned(arg, known, files, settings, depth)
    if kind == "nth" and arg[1][0] == "ret":  # an item of the tuple a call returns
        return _returned(arg[1], known, files, settings, depth, item=arg[2])
    if kind == "reg":  # MODELS[name](cfg): what each item the registry may hold builds
        _, rref, key, passes = arg
        key = constants._value(key, known, None) if key is not None else None
        values = []
        for _, item in _registry_items(rref, key if key is not None and key[0] not in constants.NOT_LITERAL else None,
                                       files, settings):
            f = _function_facts(item, files, settings)
            one = ("ret", None, item, passes) if f is not None else ("new", item, passes)
            values.append(_object_value(one, known, files, settings, depth + 1))
        if not values or None in values:
            return None
        members = tuple(dict.fromkeys(m for v in values for m in (v[1] if v[0] == "any" else (v,))))
        return ("any", members) if len(members) > 1 else members[0]
    if kind == "either":  # one of several constructor calls: each object
        found = tuple(dict.fromkeys(v for v in (_object_value(a, known, files, settings, depth + 1) for a in arg[1])
                                    if v is not None))
        if len(found) != len(arg[1]):
            return None
        members = tuple(dict.fromkeys(m for v in found for m in (v[1] if v[0] == "any" else (v,))))
        return ("any", members) if len(members) > 1 else members[0]
    if kind == "elt":  # an item of the list an attribute chain holds: any of its objects
        items = constants._value(arg[1], known, lambda a, k: _object_value(a, k, files, settings, depth + 1))
        return ("any", items[1]) if items is not None and items[0] == "objs" and items[1] else None
    if kind in ("chain", "get"):
        def objects(a, k):
            return _object_value(a, k, files, settings, depth + 1)
        if kind == "get":
            base, attrs = constants._value(arg[1], known, objects), (arg[2],)
        else:
            parts = arg[1].split(".")
            base, attrs = known.get(parts[0]), parts[1:]
        for attr in attrs:
            if base is None:
                return None
            base = _attribute(base, attr, files, settings, depth + 1)
        return base
    if arg[0] == "news":
        items = tuple(v for v in (_object_value(a, known, files, settings, depth + 1) for a in arg[1]) if v is not None)
        return ("objs", tuple(dict.fromkeys(items))) if items else None
    cls = _class_of(arg[1], files, settings)
    if cls is None:
        return None
    inits = _method_table(cls, files, settings).get("__init__", ())
    init: tuple = ()
    callee = _function_facts(inits[0], files, settings) if inits else None
    if callee is not None and arg[2]:
        init = constants.frozen(constants.bind(
            arg[2], known, callee.params, 1, lambda a, k: _object_value(a, k, files, settings, depth + 1)))
    split = _split_chain(inits[0], callee, init, files, settings) if callee is not None else None
    if split is not None:  # Trainer(accelerator=args.accelerator): one object per branch its __init__ takes
        chain, literals = split
        return ("any", tuple(("obj", cls, constants.frozen({**dict(init), chain: v}))
                             for v in literals + (constants.OTHER,)))
    if any(v[0] == "any" for _, v in init):  # Trainer(strategy=strategy), one of several: one trainer each
        combos, left_out = _per_choice(init)
        return None if left_out else ("any", tuple(("obj", cls, constants.frozen(c)) for c in combos))
    return ("obj", cls, init)


def _split_chain(init_ref: Ref, init, context: tuple, files: ProjectFiles, settings: Settings):
    """``(chain, literals)`` when the ``__init__`` ``init_ref`` (whose facts are ``init``)
    stores an attribute in branches (:attr:`.summary.ClassFacts.attr_values` ``"alts"``) that
    test one chain rooted in its parameters against at most three literals, and the
    constructor call's ``context`` does not know that chain: the object is told apart per
    literal (and one for none of them), so that what each branch stores stays together with
    the rest of that object (the strategy a launcher was built for is the one its run
    uses); else ``None``."""
    s = summary_of(Path(init_ref[0]), files, settings)
    cls = s.cls(init_ref[1].rpartition(".")[0]) if s is not None else None
    if cls is None or not cls.attr_values:
        return None
    known = dict(context)
    chains: dict[str, list] = {}
    for _, value in cls.attr_values:
        if value is None or value[0] != "alts":
            continue
        for conds, _ in value[1]:
            for chain, literal, _, _ in conds:
                if chain[:1] != "@" and chain not in known and chain.split(".", 1)[0] in init.params[1:]:
                    found = chains.setdefault(chain, [])
                    if literal not in found:
                        found.append(literal)
    if len(chains) != 1:
        return None
    chain, literals = next(iter(chains.items()))
    return (chain, tuple(literals)) if len(literals) <= 3 else None


def _returned(arg: tuple, known: dict, files: ProjectFiles, settings: Settings, depth: int = 0,
              item: int | None = None):
    """The value of a call ``("ret", receiver or None, method name or function ref, passes)``:
    the argument the function it runs gives back as the same object
    (:attr:`.summary.FunctionFacts.returns_param`: ``model = strategy.setup_module(module)``
    holds the module handed in); ``None`` when unknown or the targets disagree."""
    def objects(a, k):
        return _object_value(a, k, files, settings, depth + 1)

    _, receiver, name, passes = arg
    targets: list = []
    if receiver is None:
        targets = [(t, None) for t, c in _targets(name, files, settings) if c is None]
    else:
        obj = constants._value(receiver, known, objects)
        for o in (obj[1] if obj is not None and obj[0] == "any" else (obj,)):
            if o is None or o[0] != "obj":
                return None
            targets.extend((t, o) for t in _method_table(o[1], files, settings).get(name, ())[:1])
    found = []
    for t, o in targets:
        f = _function_facts(t, files, settings)
        if item is not None:  # model, opt, loader = acc.prepare(...): position `item` of the tuple returned
            if f is None or item >= len(f.returns_items) or f.returns_items[item] is None:
                return None
            given = constants.bind(passes, known, f.params, 1 if o is not None else 0, objects, f.varargs)
            if o is not None and f.params:
                given[f.params[0]] = o
            value = constants._value(f.returns_items[item], given, objects)
            if value is None:
                return None
            found.append(value)
            continue
        if f is not None and f.returns_param < 0 and f.returns_alts:
            value = _factory_value(f, o, passes, known, objects)
            if value is None:
                return None
            found.append(value)
            continue
        if f is None or f.returns_param < 0:
            return None
        index = f.returns_param - (1 if o is not None else 0)
        value = None
        for i, k, a in passes:
            if (i == index and k is None) or k == f.params[f.returns_param]:
                value = constants._value(a, known, objects)
        if value is None:
            return None
        found.append(value)
    found = list(dict.fromkeys(found))
    return found[0] if len(found) == 1 else None


def _factory_value(f, obj, passes: tuple, known: dict, objects):
    """What a call of function ``f`` (on object ``obj``, or ``None``) passing ``passes`` returns
    by its ``return`` statements (:attr:`.summary.FunctionFacts.returns_alts`): the first whose
    guard the call's context makes hold; the objects of every return that may run when the
    context does not tell (``get_env(cfg)`` with ``cfg.device`` unknown: the TPU and the CUDA
    environment, one object each; an XLA-off branch's never, in an XLA run); ``None`` when
    one of them is unknown."""
    given = constants.bind(passes, known, f.params, 1 if obj is not None else 0, objects, f.varargs)
    if obj is not None and f.params:
        given[f.params[0]] = obj
    maybe: list = []
    for conds, arg in f.returns_alts:
        verdict = constants.decided(conds, given)
        if verdict is False:
            continue
        value = constants._value(arg, given, objects)
        if value is None:
            return None
        maybe.extend(value[1] if value[0] == "any" else (value,))
        if verdict:
            break
    members = tuple(dict.fromkeys(v for v in maybe if v[0] == "obj"))
    if len(members) != len(set(maybe)):
        return None  # (a literal or None among what it may return: not one object)
    return members[0] if len(members) == 1 else ("any", members) if members else None


def _attribute(obj: tuple, attr: str, files: ProjectFiles, settings: Settings, depth: int = 0):
    """The value of ``obj.attr`` for an object value ``("obj", class, its constructor's
    context)``: what the ``__init__`` of the first class of its bases' order that stores
    ``self.attr`` stores there (:attr:`.summary.ClassFacts.attr_values`), evaluated in the
    constructor call's context when that ``__init__`` is the one the call ran (a base's
    ``__init__`` reached through ``super()`` knows only ``self``); else a method of its
    class, bound to it (``("fn", method, obj)``); ``None`` when unknown."""
    if obj[0] == "any" and depth <= 6:  # each object it may be: what they hold
        found = tuple(dict.fromkeys(v for v in (_attribute(o, attr, files, settings, depth + 1) for o in obj[1])
                                    if v is not None))
        return found[0] if len(found) == 1 else ("any", found) if found else None
    if obj[0] != "obj" or depth > 6:
        return None
    table = _method_table(obj[1], files, settings)
    for file, cls in _class_chain(obj[1], files, settings):
        stored = dict(cls.attr_values).get(attr, False) if cls.attr_values else False
        if stored is False:
            if attr in cls.methods or attr in cls.assigned:
                break
            continue
        if stored is None:
            return None
        own = (file, f"{cls.name}.__init__")
        init = _function_facts(own, files, settings)
        if init is None or not init.params:
            return None
        context = dict(obj[2]) if table.get("__init__", [None])[0] == own else {}
        context[init.params[0]] = obj
        return constants._value(stored, context, lambda a, k: _object_value(a, k, files, settings, depth + 1))
    methods = table.get(attr, ())
    if methods and not _assigned_first(obj[1], attr, files, settings):
        return ("fn", methods[0], obj)
    return None


def _class_of(ref: Ref, files: ProjectFiles, settings: Settings, depth: int = 0) -> Ref | None:
    """``ref`` through package re-exports to the class it names; ``None`` when none."""
    file, name = ref
    s = summary_of(Path(file), files, settings)
    if s is None or depth > 6:
        return None
    if s.cls(name) is not None:
        return ref
    exported = s.export(name)
    return _class_of(exported, files, settings, depth + 1) if exported is not None else None


def _object_callees(s: ModuleSummary, f, node: Ref, cls: Ref | None, known: dict, me: str | None, objects,
                    files: ProjectFiles, settings: Settings, out: list) -> None:
    """:func:`_dispatched_callees`' calls on objects: the module's dispatches in ``node`` on an
    object its parameters or its own object's constructor arguments hold (only the methods
    called: an object handed in does not run its other methods)."""
    qual = node[1]
    edges = dict(f.edges) if f.edges else {}
    this = known.get(me) if me is not None else None
    if this is None and cls is not None:
        this = ("obj", cls, ())
    own = (node[0], qual.rpartition(".")[0]) if "." in qual else None  # cb.m(self, ...): self is this object
    init = dict(this[2]) if this is not None and this[0] == "obj" else {}
    for d in s.dispatches:
        if d.caller != qual or not d.method:
            continue
        if d.origin == qual:
            value = known.get(d.param)
        elif d.origin.endswith(".__init__") and this is not None:
            value = init.get(d.param)  # self.callbacks kept from the constructor's parameter
        else:
            continue
        if value is None or value[0] not in constants.OBJECTS:
            continue
        values = value[1] if value[0] == "objs" else (value,)
        if d.element != (value[0] == "objs"):
            continue  # (an element of a list, or the object itself: what the call site says)
        for v in values:
            table = _method_table(v[1], files, settings)
            runs = table.get(d.method) or (table.get("forward", ()) if d.method == "__call__" else ())
            for r in runs[:1]:  # (the override that runs)
                _REACH_DISPATCHES.setdefault((files.root, settings), {}).setdefault(r, set()).add((node[0], d))
                if d.loops:
                    _REACH_RESOLVED.setdefault((files.root, settings), {}).setdefault(
                        (node[0], d.caller, d.loops[-1]), set()).add(r)
                sites = edges.get(f"@{d.line}.{d.method}") if edges else None
                if sites:  # what the call passes, as the reach knows it (constants, objects, functions)
                    callee = _function_facts(r, files, settings)
                    if callee is None or not callee.params:
                        continue
                    for conds, args in sites:
                        if constants.holds(conds, known):
                            given = constants.bind(args, known, callee.params, 1, objects, callee.varargs)
                            given[callee.params[0]] = v
                            out.append((r, v[1], constants.frozen(given), None))
                    continue
                out.append((r, v[1], _dispatch_context(d, known, r, v, own, this, files, settings), None))



def _dispatch_context(d, known: dict, r: Ref, obj: tuple, own: Ref | None, this: tuple | None,
                      files: ProjectFiles, settings: Settings) -> tuple:
    """The context of method ``r`` a dispatch ``d`` runs on object ``obj``: the object as its
    first parameter, and the caller's parameters or objects its arguments pass (the caller's
    own ``self``, an instance of its class ``own``: the object ``this`` it runs on, when known)."""
    callee = _function_facts(r, files, settings)
    if callee is None or not callee.params:
        return ()
    params = callee.params
    given: dict = {params[0]: obj}
    pairs = [(i + 1, a) for i, a in enumerate(d.args)] + [(params.index(n), a) for n, a in d.kwargs if n in params]
    for i, a in pairs:
        if i >= len(params):
            continue
        if a.kind == PARAM and a.name in known:
            given[params[i]] = known[a.name]
        elif a.kind == INSTANCE and len(a.refs) == 1:
            if a.refs[0] == own:
                if this is not None:
                    given[params[i]] = this  # (the caller's self, or an instance of its class: not told apart)
                continue
            cls = _class_of(a.refs[0], files, settings)
            if cls is not None:
                given[params[i]] = ("obj", cls, ())
    return constants.frozen(given)


def _targets(ref: Ref, files: ProjectFiles, settings: Settings, depth: int = 0) -> list:
    """:func:`_functions_of` of ``ref`` with the class of the object each runs on:
    ``[(method, (file, "Cls"))]`` for a class (its instances' methods) or ``Cls.m``,
    ``[(function, None)]`` for a plain function."""
    file, qual = ref
    s = summary_of(Path(file), files, settings)
    if s is None or depth > 6:
        return []
    head, _, rest = qual.partition(".")
    if s.cls(head) is not None:
        found = _functions_of(ref, files, settings)
        return [(r, (file, head)) for r in found]
    if s.function(qual) is not None:
        return [(ref, None)]
    exported = s.export(head)
    if exported is not None:
        target = exported[1] + ("." + rest if rest else "")
        return _targets((exported[0], target), files, settings, depth + 1)
    if s.registries and not rest:  # MODELS[name](cfg): what the registry may hold
        return [t for _, r in _registry_items(ref, None, files, settings) for t in _targets(r, files, settings, depth + 1)]
    return []


def _callees(node: Ref, files: ProjectFiles, settings: Settings, called: bool = False) -> list[Ref]:
    """The functions ``node`` calls or names across the project (with ``called``, those it
    calls: not ``FunctionFacts.named_only``)."""
    file, qual = node
    s = summary_of(Path(file), files, settings)
    if s is None:
        return []
    f = s.function(qual)
    if f is None:
        return []
    skip = f.named_only if called else ()
    out = [(file, q) for q in f.calls_local if q not in skip]
    for ref in f.calls_out:
        if ref not in skip:
            out.extend(_functions_of(ref, files, settings))
    return out


def _functions_of(ref: Ref, files: ProjectFiles, settings: Settings, depth: int = 0) -> list[Ref]:
    """The functions a reference to another module names: a function, a method, every
    method an instance of a class has (its own and those it inherits), through re-exports."""
    file, qual = ref
    s = summary_of(Path(file), files, settings)
    if s is None or depth > 6:
        return []
    if s.function(qual) is not None:
        return [ref]
    head, _, rest = qual.partition(".")
    if s.cls(head) is not None:
        if rest:
            return [r for r in _class_methods((file, head), files, settings) if r[1].endswith("." + rest)][:1]
        return _class_methods((file, head), files, settings)
    exported = s.export(head)
    if exported is not None:
        target = exported[1] + ("." + rest if rest else "")
        return _functions_of((exported[0], target), files, settings, depth + 1)
    if s.registries and not rest:
        return [f for _, r in _registry_items(ref, None, files, settings)
                for f in _functions_of(r, files, settings, depth + 1)]
    return []


_REGISTRIES: dict[tuple, tuple] = {}
#: the keys of a registry's items an XLA run selects when the key is not known
#: (``BACKENDS[args.device]``: not the CUDA backend)
_XLA_KEYS = frozenset({"tpu", "xla", "tpu_v4", "tpu_v5", "tpuv4", "tpuv5"})
_OFF_KEYS = frozenset({"cuda", "gpu", "cpu", "nccl", "gloo", "mps", "nvidia", "ddp", "cuda_ddp"})


def _registry_items(ref: Ref, key, files: ProjectFiles, settings: Settings) -> tuple:
    """``((key, item ref), ...)`` of registry ``ref`` (:attr:`.summary.ModuleSummary.registries`):
    the functions and classes its module puts in it, and those the project's modules decorate
    with one of its registrars (``@register_model("tiny_gpt")``), in its module and in the
    modules importing it (also through a package ``__init__``). ``key``: the literal key the
    lookup names (``MODELS["resnet"]``), selecting the items under it; ``None``: unknown, every
    item, except that an XLA run never selects the items under device names of another
    backend when one is under ``"tpu"`` / ``"xla"`` (:data:`_XLA_KEYS`). Memoised."""
    memo = (ref, settings)
    found = _REGISTRIES.get(memo)
    if found is None:
        _REGISTRIES[memo] = ()
        file, name = ref
        s = summary_of(Path(file), files, settings)
        items: list = []
        if s is not None:
            for n, held in s.registries:
                if n == name:
                    items.extend(held)
            registrars = {(file, q) for q, n in s.registrars if n == name}
            if registrars:
                mods = {Path(file)}
                for imp in files.importers(Path(file)):
                    mods.add(imp)
                    if imp.name == "__init__.py":
                        mods.update(files.importers(imp))
                for m in sorted(mods, key=str):
                    ms = summary_of(m, files, settings)
                    for qual, dref, k in ms.decorated if ms is not None else ():
                        if _reexported(dref, files, settings) in registrars:
                            items.append((k, (str(m), qual)))
        found = _REGISTRIES[memo] = tuple(dict.fromkeys(items))
    if key is not None:
        chosen = tuple(i for i in found if i[0] == key or i[0] is None)
        return chosen if chosen else found
    keys = {str(k[1]).lower() for k, _ in found if k is not None}
    if keys & _XLA_KEYS and keys & _OFF_KEYS:
        return tuple(i for i in found if i[0] is None or str(i[0][1]).lower() not in _OFF_KEYS)
    return found


_CLASS_METHODS: dict[tuple, list[Ref]] = {}


def _class_methods(ref: Ref, files: ProjectFiles, settings: Settings, depth: int = 0) -> list[Ref]:
    """The methods of class ``ref``'s instances, an override hiding the base's: ``(file, Cls.m)``
    (memoised per class and settings; do not modify the list returned)."""
    key = (ref, settings)
    got = _CLASS_METHODS.get(key)
    if got is None:
        got = _CLASS_METHODS[key] = _class_methods_of(ref, files, settings)
    return got


_METHOD_TABLES: dict[tuple, dict[str, list[Ref]]] = {}


def _method_table(ref: Ref, files: ProjectFiles, settings: Settings) -> dict[str, list[Ref]]:
    """:func:`_class_methods` of class ``ref`` by method name (built once per class)."""
    key = (ref, settings)
    got = _METHOD_TABLES.get(key)
    if got is None:
        got = _METHOD_TABLES[key] = {}
        for r in _class_methods(ref, files, settings):
            got.setdefault(r[1].rsplit(".", 1)[-1], []).append(r)
    return got


def _class_chain(ref: Ref, files: ProjectFiles, settings: Settings):
    """``(file, ClassFacts)`` of class ``ref`` and its bases across the project, breadth first
    in the order each ``class`` line names its bases (``class MixinRunner(XlaCheckpointMixin,
    BaseRunner)``: the mixin first), package re-exports followed, at most 8 levels."""
    todo, seen = [(ref, 0)], set()
    while todo:
        (file, name), d = todo.pop(0)
        if (file, name) in seen or d > 8:
            continue
        seen.add((file, name))
        s = summary_of(Path(file), files, settings)
        if s is None:
            continue
        cls = s.cls(name)
        if cls is None:
            exported = s.export(name)
            if exported is not None:
                todo.append((exported, d + 1))
            continue
        yield file, cls
        if cls.bases_order:
            todo.extend((((file, b[1]) if not b[0] else b), d + 1) for b in cls.bases_order)
        else:
            todo.extend(((file, b), d + 1) for b in cls.bases_local)
            todo.extend((b, d + 1) for b in cls.bases_out)


def _super_method(owner: Ref, obj: Ref | None, m: str, files: ProjectFiles, settings: Settings) -> Ref | None:
    """The method ``super().m()`` in a method of class ``owner`` runs on an object of class
    ``obj``: the first class after ``owner`` in ``obj``'s bases order (:func:`_class_chain`)
    that defines ``m``, so a mixin's ``super()`` reaches the class listed after it
    (``class Trainer(XlaMixin, BaseLoop)``: ``XlaMixin.step``'s ``super().step()`` is
    ``BaseLoop.step``); with ``obj`` unknown or not a subclass of ``owner``, the first of
    ``owner``'s own bases defining it. ``None`` when none does."""
    if obj is not None and obj != owner:
        chain = [(f, c.name) for f, c in _class_chain(obj, files, settings)]
        at = next((i for i, r in enumerate(chain) if r == owner), None)
        if at is not None:
            for file, name in chain[at + 1:]:
                s = summary_of(Path(file), files, settings)
                c = s.cls(name) if s is not None else None
                if c is not None and m in c.methods:
                    return (file, f"{name}.{m}")
            return None
    s = summary_of(Path(owner[0]), files, settings)
    own = s.cls(owner[1]) if s is not None else None
    bases = [(owner[0], b) for b in own.bases_local] + list(own.bases_out) if own is not None else []
    for base in bases:
        found = [r for r in _class_methods(base, files, settings) if r[1].rsplit(".", 1)[-1] == m]
        if found:
            return found[0]
    return None


def _assigned_first(ref: Ref, name: str, files: ProjectFiles, settings: Settings) -> bool:
    """Class ``ref``'s instances get attribute ``name`` from a class-level assignment, not a
    ``def`` (``save = _xla_save``, the first class in the bases' order naming it assigns it):
    an override whose body is not followed."""
    for _, cls in _class_chain(ref, files, settings):
        if name in cls.assigned:
            return True
        if name in cls.methods:
            return False
    return False


def _class_methods_of(ref: Ref, files: ProjectFiles, settings: Settings) -> list[Ref]:
    found: dict[str, Ref] = {}
    for file, cls in _class_chain(ref, files, settings):
        for m in cls.assigned:
            found.setdefault(m, None)  # on_step_end = Callback.on_step_end: not followed
        for m in cls.methods:
            found.setdefault(m, (file, f"{cls.name}.{m}"))
    return [r for r in found.values() if r is not None]


def helper_facts(ref: Ref, files: ProjectFiles, settings: Settings) -> HelperFacts | None:
    """Facts about function ``ref`` (``(file, "f" / "Cls.m")``, through re-exports and bases)
    and everything it calls across the project; ``None`` when it is no known function.
    Memoised per (ref, settings) for the process."""
    key = (ref, settings)
    if key in _HELPERS:
        return _HELPERS[key]
    _HELPERS[key] = None
    file, qual = ref
    s = summary_of(Path(file), files, settings)
    for _ in range(MAX_REEXPORT_DEPTH):  # (a package's re-export of a class: the class's module)
        exported = s.export(qual) if s is not None and "." not in qual and s.cls(qual) is None else None
        if exported is None or "." in exported[1]:
            break
        file, qual = exported
        s = summary_of(Path(file), files, settings)
        ref = (file, qual)
    cls = s.cls(qual) if s is not None and "." not in qual else None
    if cls is not None:  # a class: what it is, and nothing it does (its methods are asked by name)
        init = _method_table(ref, files, settings).get("__init__")
        init_s = summary_of(Path(init[0][0]), files, settings) if init else None
        init_f = init_s.function(init[0][1]) if init_s is not None else None
        found = HelperFacts(_relative(Path(file), files.root), qual, frozenset(), True, False,
                            plain_dataset=cls.plain_dataset and not cls.bases_out,
                            device_attrs=frozenset(cls.device_attrs),
                            fed_params=tuple(i - 1 for i in init_f.fed_params if i > 0) if init_f else (),
                            moves_params=tuple(i - 1 for i in init_f.moved_in_place if i > 0) if init_f else (),
                            unsynced_params=tuple(i - 1 for i in init_f.unsynced_params if i > 0) if init_f else (),
                            returns_wrap=defs.wrap_kind((file, qual), files))  # class XlaDDP(DDP): XlaDDP(model)
        _HELPERS[key] = found
        return found
    targets = _functions_of(ref, files, settings)
    if len(targets) != 1:
        return None  # nothing known
    start = targets[0]
    done = _node_facts(start, files, settings)
    if done is None:
        return None  # a cycle or something unknown on the way: not a known helper
    xla, may_sync, steps, updates, syncs, saves, runs = done
    root = summary_of(Path(start[0]), files, settings)
    first = root.function(start[1]) if root is not None else None
    found = HelperFacts(_relative(Path(start[0]), files.root), start[1], xla, may_sync,
                        bool(first is not None and first.yields_seen), steps, updates, syncs,
                        param_syncs=first.param_syncs if first is not None else (),
                        local_master=bool(first is not None and first.local_master),
                        saves=saves, master=first.master if first is not None else "",
                        moves_param=_moves_param(ref, first, files, settings),
                        steps_once=bool(first is not None and first.steps_once),
                        returns_loader=first.returns_loader if first is not None else "",
                        self_steps=first.self_steps if first is not None else (),
                        returns_wrap=first.returns_wrap if first is not None else "",
                        returns_device=bool(first is not None and first.returns_device),
                        passes_loader=first.passes_loader if first is not None else -1,
                        fed_params=first.fed_params if first is not None else (),
                        returns_sampler=first.returns_sampler if first is not None else "",
                        shared_effect=first.shared_effect if first is not None else "",
                        holds_step_loop=bool(first is not None and first.holds_step_loop), runs=runs,
                        moves_params=first.moved_in_place if first is not None else (),
                        unsynced_params=first.unsynced_params if first is not None else ())
    _HELPERS[key] = found
    return found


def _moves_param(ref: Ref, facts, files: ProjectFiles, settings: Settings) -> int:
    """:attr:`HelperFacts.moves_param` of ``ref`` whose function's facts are ``facts``: a
    ``"self.m"`` device is looked up on the class ``ref`` names (its own or inherited
    ``m``), which must return the XLA device."""
    if facts is None or not facts.moves_param:
        return -1
    index, where = facts.moves_param
    if where == "xla":
        return index
    head, _, method = ref[1].partition(".")
    if not method or not where.startswith("self."):
        return -1
    targets = _functions_of((ref[0], f"{head}.{where[5:]}"), files, settings)
    if len(targets) != 1:
        return -1
    s = summary_of(Path(targets[0][0]), files, settings)
    f = s.function(targets[0][1]) if s is not None else None
    return index if f is not None and f.returns_device else -1


_BUSY = object()


def _node_facts(start: Ref, files: ProjectFiles, settings: Settings):
    """``(xla_calls, may_sync, steps, updates, syncs, saves, runs)`` of function ``start`` and
    everything it calls across the project (``runs``: the xla calls through call edges only,
    :attr:`HelperFacts.runs`), or ``None`` when one of them is unknown or on a cycle back to
    it. Each function's facts are combined from its callees' once per process (an iterative
    depth-first pass, memoised), so asking every module's helpers is linear in the project."""
    memo = _NODES
    kids: dict[Ref, list[Ref]] = {}
    stack = [start]
    while stack:
        node = stack[-1]
        key = (node, settings)
        got = memo.get(key, None)
        if key in memo and got is not _BUSY:
            stack.pop()
            continue
        if key not in memo:  # first visit: its callees first
            memo[key] = _BUSY
            kids[node] = _callees(node, files, settings)
            stack.extend(k for k in kids[node] if (k, settings) not in memo)
            continue
        stack.pop()
        s = summary_of(Path(node[0]), files, settings)
        f = s.function(node[1]) if s is not None else None
        parts = [memo.get((k, settings)) for k in kids.get(node, ())]
        if f is None or any(p is None or p is _BUSY for p in parts):
            memo[key] = None
            continue
        xla = frozenset(f.xla_calls).union(*(p[0] for p in parts))
        runs = xla
        if f.named_only:  # what calling it runs: not the functions it only names
            named = set(kids.get(node, ())) - set(_callees(node, files, settings, called=True))
            runs = frozenset(f.xla_calls).union(*(p[6] for k, p in zip(kids.get(node, ()), parts) if k not in named))
        elif any(p[6] is not p[0] for p in parts):
            runs = frozenset(f.xla_calls).union(*(p[6] for p in parts))
        memo[key] = (xla, f.may_sync or any(p[1] for p in parts), f.steps or any(p[2] for p in parts),
                     f.updates or any(p[3] for p in parts), f.syncs or any(p[4] for p in parts),
                     frozenset(f.saves).union(*(p[5] for p in parts)), runs)
    found = memo.get((start, settings))
    return None if found is _BUSY else found


_LAST_BINDINGS: list = [None, None, None]  # (path, tree, bindings) of the module linted last


def _bindings_of(path: Path, tree, files: ProjectFiles) -> dict:
    """:func:`~.summary.import_bindings` of the linted module, once for its lookups
    (:func:`helper_lookup`, :func:`defs_lookup`): kept for the tree it was asked of last."""
    last = _LAST_BINDINGS
    if last[0] != path or last[1] is not tree:
        last[:] = [path, tree, import_bindings(path, tree, files)]
    return last[2]


def answers_for(filename: str, settings: Settings, source: str | None, codes: tuple[str, ...]):
    """The on-disk answers of the linted module in ``filename`` (:mod:`.answers`), linted
    with ``settings`` (the model's) from text ``source`` by the rules ``codes``; ``None``
    when project mode or the cache is off, or the file is unknown."""
    found = _module_file(filename, settings)
    if found is None:
        return None
    return answers.module_answers(found[0], found[1], settings, source, codes)


def findings_for(filename: str, settings: Settings, source: str | None, rules: tuple[str, ...]):
    """The on-disk findings entry of the linted module in ``filename`` (:mod:`.findings`), linted
    with ``settings`` from text ``source`` by the rules named ``rules``; ``None`` when project
    mode or the cache is off, or the file is unknown."""
    if settings.cache != "on" or source is None:
        return None
    found = _module_file(filename, settings)
    if found is None:
        return None
    return findings.module_findings(found[0], found[1], settings, source, rules)


def defs_lookup(filename: str, tree, settings: Settings):
    """A function ``parts -> DefFacts`` for the module in ``filename`` whose tree is
    ``tree``: what the light index (:mod:`.defs`) says of the project class or function a
    dotted chain rooted in a name its imports bind names (an ``nn.Module`` subclass, a
    function that returns its argument). ``None`` when project mode is off or the file is
    unknown."""
    found = _module_file(filename, settings)
    if found is None:
        return None
    path, files = found
    bindings = None

    def lookup(parts: tuple[str, ...]) -> DefFacts:
        nonlocal bindings
        if bindings is None:
            bindings = _bindings_of(path, tree, files)
        ref = resolve_chain(parts, bindings, files)
        return def_facts(ref, files) if ref is not None else NOTHING

    return lookup


def helper_lookup(filename: str, tree, settings: Settings):
    """A function ``parts -> HelperFacts | None`` for the module in ``filename`` whose tree is
    ``tree``: ``("iterate_batches",)`` or ``("utils", "train_fn")`` or
    ``("CheckpointSaver", "save")``, a dotted chain rooted in a name its imports bind to a
    project module; or, with ``cls=(file, "Cls")`` (a class callers name, see
    :class:`~.callers.ArgFacts`), ``(method,)``: that method of the class, its own or
    inherited, and ``()``: the class itself; with ``factory=(args, kwargs)`` (the literal
    constants of a builder's call), ``(..., "builder", method)``: that method of the class
    the builder builds (:func:`~.defs.factory_class`: ``get_accelerator(config.BACKEND)``).
    ``None`` when project mode is off or the file is unknown. Its attribute ``defines``
    (``name -> bool``, :meth:`~.files.ProjectFiles.defines`): some file of the project may
    define a function of that name (every lookup of a method ``name`` that finds one
    finds a ``def name``)."""
    found = _module_file(filename, settings)
    if found is None:
        return None
    path, files = found
    bindings = None

    def lookup(parts: tuple[str, ...], cls: Ref | None = None, factory: tuple | None = None) -> HelperFacts | None:
        nonlocal bindings
        if cls is not None:  # method parts[-1] of project class cls (its own or inherited)
            return helper_facts((cls[0], f"{cls[1]}.{parts[-1]}") if parts else cls, files, settings)
        if bindings is None:
            bindings = _bindings_of(path, tree, files)
        if factory is not None:  # method parts[-1] of what builder parts[:-1] builds for these constants
            ref = resolve_chain(parts[:-1], bindings, files)
            built = (defs.instance_class(ref, files) or defs.factory_class(ref, *factory, files)) \
                if ref is not None else None
            return helper_facts((built[0], f"{built[1]}.{parts[-1]}"), files, settings) if built else None
        ref = resolve_chain(parts, bindings, files)
        return helper_facts(ref, files, settings) if ref is not None else None

    lookup.defines = files.defines  # (a name no `def` of the project has names no project function)
    return lookup


#: how many levels of package ``__init__.py`` re-exports are followed to a module's importers
MAX_REEXPORT_DEPTH = 2


@dataclasses.dataclass
class _Callers:
    """The calls other project modules make into one module (built once per process)."""

    calls: dict[str, list[CallFacts]]  # qual -> calls and references, importer by importer
    unread: frozenset[str]  # identifiers of importers not summarised (no torch_xla in their text)
    unknown: bool  # an importer that names torch_xla could not be summarised
    where: dict[int, str] = dataclasses.field(default_factory=dict)  # id(call) -> the importer's file


def _xla_caller(file: str, caller: str, files: ProjectFiles, settings: Settings) -> bool:
    """The function ``caller`` (a qual; ``""``: the module level) of module ``file`` runs as
    XLA code: the module launches it (or a function that calls it) itself, the project's
    launched code reaches it, or it is the module level of a torch_xla script. True when
    the module cannot be read (unknown keeps the call)."""
    s = summary_of(Path(file), files, settings)
    if s is None:
        return True
    if not caller:
        return s.uses_torch_xla
    head = caller
    while True:  # a nested function runs where its outermost function runs
        if head in s.launched_multi or head in s.launched_single or head in s.script_roots \
                or head in _reach_index(files, settings).get(file, {}):
            return True
        if "." not in head:
            return False
        head = head.rsplit(".", 1)[0]


def callers_lookup(filename: str | None, settings: Settings):
    """A function ``(qual, partial=False) -> tuple[CallFacts, ...] | None`` for the module in
    ``filename``: every call (and non-call reference) other project modules make of its
    function ``qual`` (``train_fn``), with what each passes (:class:`~.callers.CallFacts`);
    for a method (``Cls.m``), also the method calls on objects other modules' functions
    received as parameters that reach it (:func:`_dispatched_to`: ``cb.on_step_end(...)``
    over a list of callbacks the caller of ``Trainer`` passed, ``model(x)`` for ``forward``),
    arguments without ``self``;
    ``()`` when none does; ``None`` when some may and cannot be read (an importer that does
    not parse, or one whose text does not name torch_xla -- it is not summarised, so a
    function it names has unknown callers). With ``partial``, the calls of the importers
    that could be read, never ``None`` (for "some caller does X" questions); with
    ``step_only``, only the calls that run in another module's training step
    (``CallFacts.in_step``), and none when no other file's text calls the name
    (:func:`_called_elsewhere`), and for a method also a base class's ``self.m(...)`` in
    another module's loop on an object of its class (:func:`_self_site_calls`); with
    ``reiterated``, only the calls (and such ``self.m(...)``) whose result is iterated once
    per pass of an enclosing loop (``CallFacts.reiterated``); with ``xla_only``, only the
    calls made where XLA code runs (:func:`_xla_caller`: a CPU debug script's
    ``Trainer(CPUStrategy())`` says nothing of the XLA run's strategy). ``None`` instead of a
    function when project mode is off or the file is unknown. Its attribute ``uncalled``
    (``qual -> bool``): ``step_only`` would give ``()`` for ``qual`` by the text gate, known
    at the cost of a dictionary lookup (the index of called names built; else ``False``).

    The module's importers (its text's import statements, and those of the package
    ``__init__.py`` files that import it, :data:`MAX_REEXPORT_DEPTH` levels) are read once
    per module and process; each importer's summary is built once per process.
    """
    found = _module_file(filename, settings)
    if found is None:
        return None
    path, files = found
    found: _Callers | None = None

    def lookup(qual: str, partial: bool = False, step_only: bool = False, reiterated: bool = False,
               xla_only: bool = False, fed: bool = False):
        if fed:
            return _fed_calls(qual)
        calls = raw(qual, partial, step_only, reiterated, xla_only)
        return calls if calls is None else tuple(_resolve_call(c, files, settings) for c in calls)

    def _fed_calls(qual: str) -> tuple:
        """``((CallFacts, items), ...)``: the calls of ``qual`` whose result a step loop of XLA
        code draws its batches from, with the items of the result it reaches (``None``: whole)."""
        key = (str(path), qual, settings)
        if key in _FED:
            return _FED[key]
        _FED[key] = ()  # (a cycle of functions returning each other's result: none)
        calls = raw(qual, partial=True)
        where = found.where if found is not None else {}
        out = []
        for c in calls:
            file = where.get(id(c))
            if file is None and id(c) in _DISPATCH_FILES:
                file = _DISPATCH_FILES[id(c)][1]  # a dispatch the reach resolved
            if file is not None and not _xla_caller(file, c.caller, files, settings):
                continue
            items = frozenset(c.feeds_items) or None
            if c.feeds_step or (file is not None and c.feeds_calls
                                and _steps_once_at(file, c.feeds_calls, files, settings)):
                out.append((c, items))  # (a self.m() site: on an object the launched code reaches)
                continue
            if file is None:
                continue
            passed = _passed_on(file, c.feeds_via, files, settings) if c.feeds_via else False
            if passed is not False:
                out.append((c, passed))  # strategy.device_loader(train_loader) gives it back to the loop
                continue
            up = callers_lookup(file, settings) if c.returned and c.caller else None
            if up is not None and up(c.caller, fed=True):
                out.append((c, None))  # return pl.MpDeviceLoader(super().train_dataloader(), dev)
        _FED[key] = tuple(out)
        return _FED[key]

    def raw(qual: str, partial: bool = False, step_only: bool = False, reiterated: bool = False,
            xla_only: bool = False):
        nonlocal found
        if xla_only:  # the calls made where XLA code runs (a CPU script's call is no XLA run's)
            if found is None:
                found = _callers_of(path, files, settings)
            calls = raw(qual, partial=partial)
            if calls is None:
                return None
            where = found.where
            return tuple(c for c in calls if id(c) not in where or getattr(c, "launched", False)
                         or _xla_caller(where[id(c)], c.caller, files, settings))
        if reiterated:  # (a one-shot iterable it returns is spent after one pass there)
            selves = _self_site_calls(files, settings).get(str(path), {}).get(qual, ()) if "." in qual else ()
            calls = tuple(c for c in selves if c.reiterated)
            if calls:
                return calls
            if found is None:  # (no text gate: an importer may call it by an alias)
                found = _callers_of(path, files, settings)
            where = found.where  # (or handed to a function its epoch loop calls, which iterates it)
            return tuple(c for c in found.calls.get(qual, ()) if c.reiterated or (
                c.feeds_via and id(c) in where and _iterated_again(where[id(c)], c.feeds_via, files, settings)))
        if step_only:  # a step question: asked for every candidate, so gated by the text first
            if qual.count(".") > 1 or not _called_elsewhere(path, qual.rsplit(".", 1)[-1], files):
                return ()
            if "." in qual:
                if found is None:
                    found = _callers_of(path, files, settings)
                return tuple(c for c in _dispatched_to(path, qual, files, settings) if c.in_step) \
                    + _self_site_calls(files, settings).get(str(path), {}).get(qual, ()) \
                    + _stepped(found, qual, files, settings)  # self.cbs.on_step_end(self)
        if found is None:
            found = _callers_of(path, files, settings)
        if not partial and (found.unknown or qual.rsplit(".", 1)[-1] in found.unread):
            return None
        calls = tuple(found.calls.get(qual, ()))
        if step_only:  # (in_loop: the callee's model decides whether its call is the step)
            return _stepped(found, qual, files, settings)
        if qual.count(".") == 1:  # (and a base class's self.m() on an object of this class)
            inherited, unknown = _inherited_calls(path, qual, files, settings)
            if unknown and not partial:
                return None
            for c in inherited:  # (a subclass's callers: where each call is, for xla_only)
                found.where.setdefault(id(c), _INHERITED_WHERE.get(id(c), ""))
            calls += _dispatched_to(path, qual, files, settings) \
                + _self_site_calls(files, settings).get(str(path), {}).get(qual, ()) \
                + tuple(c for c in inherited if not c.escape)
        return calls

    def uncalled(qual: str) -> bool:
        """``step_only`` is known to give no call of ``qual`` from the text alone, without a
        search: a nested function's, or a name no other file calls once the project's index
        of called names is built (before it is, ``False``: a search may cost more than the
        question it gates)."""
        return qual.count(".") > 1 or files.called_nowhere_else(qual.rsplit(".", 1)[-1], str(path))

    def objects(qual: str, param: str, element: bool = False) -> tuple | None:
        """The project classes whose instances the reach saw parameter ``param`` of ``qual``
        hold in launched code (``train(index, strategy, cfg)`` launched by a strategy's
        launcher with ``args=(self._strategy, *args)``; :func:`_reach_objects`), or with
        ``element`` the classes of the elements of the list it held; ``None`` when unknown."""
        got = _reach_objects(str(path), qual, param, files, settings)
        want = INSTANCES if element else INSTANCE
        return got.refs if got.kind == want and got.refs else None

    lookup.uncalled = uncalled
    lookup.objects = objects
    return lookup


_INHERITED: dict[tuple, tuple] = {}


def _inherited_calls(path: Path, qual: str, files: ProjectFiles, settings: Settings) -> tuple:
    """``(calls, unknown)``: the calls other modules make of method ``qual`` (``Cls.m``) of the
    module at ``path`` through a subclass that inherits it (``trainer.fit(loader)`` on a
    ``Seq2SeqTrainer`` whose ``fit`` is ``BaseLoop.fit``: the call names
    ``Seq2SeqTrainer.fit``, the method that runs is this one), as :class:`~.callers.CallFacts`
    retargeted to ``(path, qual)``; ``unknown`` when a subclass's callers cannot all be read.
    The subclasses are the classes of the importers of ``path`` (and of theirs, three
    levels) whose method table gives ``m`` as this method (:func:`_method_table`: the bases'
    order, mixins and re-exports followed). Memoised per (root, method, settings)."""
    key = (files.root, str(path), qual, settings)
    got = _INHERITED.get(key)
    if got is not None:
        return got
    _INHERITED[key] = ((), False)  # (asked again while built: none)
    head, _, m = qual.rpartition(".")
    me = (str(path), qual)
    out: list = []
    unknown = False
    seen = {str(path)}
    level = [(path, (head,))]
    for _ in range(3):
        nxt = []
        for p, names in level:
            for imp in sorted(files.importers(p)):
                if str(imp) in seen:
                    continue
                text = files.text(imp)  # (a subclass names its base: a module that does not is skipped unread)
                if text is None or not any(re.search(rf"\b{re.escape(n)}\b", text) for n in names):
                    continue
                seen.add(str(imp))
                s = summary_of(imp, files, settings)
                if s is None:
                    continue
                subs = [c.name for c in s.classes if (c.bases_out or c.bases_local)
                        and (_method_table((str(imp), c.name), files, settings).get(m) or [None])[0] == me]
                if not subs:
                    continue
                nxt.append((imp, tuple(subs)))
                found = _callers_of(imp, files, settings)
                unknown = unknown or found.unknown or m in found.unread
                for name in subs:
                    for cf in found.calls.get(f"{name}.{m}", ()):
                        new = dataclasses.replace(cf, target=me)
                        if id(cf) in found.where:
                            _INHERITED_WHERE[id(new)] = found.where[id(cf)]
                        out.append(new)
        level = nxt
    got = _INHERITED[key] = (tuple(out), unknown)
    return got


_INHERITED_WHERE: dict[int, str] = {}  # id(retargeted call) -> its caller's file (kept alive by _INHERITED)


def _stepped(found, qual: str, files: ProjectFiles, settings: Settings) -> tuple:
    """The calls of ``qual`` among the callers ``found`` (:func:`_callers_of`) that may run once
    per training step: in a step loop of their function (``CallFacts.in_step``), in another
    loop (``in_loop``: the callee's model decides, a loop calling a function that steps once
    per call is the step loop), or made outside any loop by a function a step runs once per
    step (:func:`_step_code_calls`: the ``self.accumulator.backward(loss)`` of a
    ``training_step`` the trainer's step loop calls on ``self``), then as ``in_step`` (gated
    when every step call of that function is)."""
    out = []
    where = found.where
    for c in found.calls.get(qual, ()):
        if c.in_step or c.in_loop:
            out.append(c)
        elif not c.in_loop and c.caller and not c.escape and id(c) in where:
            steps = _step_code_calls(where[id(c)], c.caller, files, settings)
            if steps:
                out.append(dataclasses.replace(c, in_step=True, gated=c.gated or all(x.gated for x in steps)))
    return tuple(out)


def _calls_at(s: ModuleSummary, file: str, line: int, name: str | None, files: ProjectFiles,
              settings: Settings, dispatch: bool = False) -> list | None:
    """The project functions the call of module ``file`` (summary ``s``) at ``line`` may run,
    re-exports followed: its calls of other modules' functions (only those of ``name`` when
    given: two calls on one line are told apart) and, with ``dispatch``, the methods a call
    of ``name`` on an object a parameter brought in runs, whose classes the callers of that
    function settle (:func:`resolve_arg`); ``None`` when such an object's class is unknown."""
    targets = [cf.target for cf in s.calls_into if cf.line == line and not cf.escape
               and (name is None or cf.target[1].rsplit(".", 1)[-1] == name)]
    for d in s.dispatches if dispatch else ():
        if d.line == line and not d.origin and d.method == name and d.param.startswith("recv:"):
            _reach_index(files, settings)  # trainer.train_epoch(loader) on what the reach resolved the chain to
            found = _REACH_CALLS.get((files.root, settings), {}).get((file, d.caller, d.param[5:]))
            if not found:
                return None
            targets.extend(sorted(found))
            continue
        if d.line == line and not d.element and d.method == name:
            v = resolve_arg(ArgFacts(PARAM, d.param, refs=((file, d.origin),)), files, settings)
            if v.kind != INSTANCE or not v.refs:
                return None
            targets.extend(_runs(v.refs, d.method, files, settings))
    return [_reexported(t, files, settings) for t in targets]


def _def_index(s: ModuleSummary, ref: Ref, f, index: int) -> int:
    """The index in the ``def`` of function ``f`` (``ref``, of summary ``s``) of positional
    argument ``index`` of a call (a method's ``self`` comes first)."""
    head = ref[1].rpartition(".")[0]
    return index + (1 if f.params and head and s.cls(head) is not None else 0)


def _steps_once_at(file: str, lines: tuple, files: ProjectFiles, settings: Settings) -> bool:
    """One of the project calls of module ``file`` at ``lines`` runs only functions that run
    the backward and an update once per call (:attr:`HelperFacts.steps_once`: the loop that
    calls it is a training step loop)."""
    s = summary_of(Path(file), files, settings)
    for line in lines if s is not None else ():
        helpers = [helper_facts(t, files, settings) for t in _calls_at(s, file, line, None, files, settings)]
        if helpers and all(h is not None and h.steps_once for h in helpers):
            return True
    return False


def _passed_on(file: str, via: tuple, files: ProjectFiles, settings: Settings):
    """What a call of module ``file`` returns is trained on through the calls there at
    ``via``'s ``(line, index, origin, name, item)`` that receive it (its ``item``, -1: whole;
    :attr:`~.callers.CallFacts.feeds_via`), each running only project functions that agree
    (:func:`_calls_at`, also methods on an object a parameter brought in): a call a step
    loop draws its batches from (``origin``) whose callees give their argument at ``index``
    back (:attr:`HelperFacts.passes_loader`: ``strategy.device_loader(train_loader)``), or a
    call whose callees' step loops iterate that parameter (``FunctionFacts.fed_params``:
    ``TrainLoop(model, opt, train_loader)``; a class runs its ``__init__``). Returns the
    items trained on (``None``: the value whole), or False."""
    s = summary_of(Path(file), files, settings)
    if s is None:
        return False
    items: set = set()
    for line, index, origin, name, item, _ in via:
        targets = _calls_at(s, file, line, name, files, settings, dispatch=True)
        if targets and all(_takes_loader(t, index, origin, files, settings) for t in targets):
            if item == -1:
                return None
            items.add(item)
    return frozenset(items) if items else False


def _iterated_again(file: str, via: tuple, files: ProjectFiles, settings: Settings) -> bool:
    """What a call of module ``file`` returns is handed, once per pass of a loop the call is
    not in, to project functions that all iterate it (``FunctionFacts.iterated_params``:
    ``batches = device_loader(loader)`` before ``for epoch ...: train_epoch(model, batches)``):
    a one-shot iterable is spent after the first pass (XLA306)."""
    s = summary_of(Path(file), files, settings)
    for line, index, origin, name, item, again in via if s is not None else ():
        if not again or origin or item != -1:
            continue
        targets = _calls_at(s, file, line, name, files, settings)
        if targets and all(_iterates(t, index, files, settings) for t in targets):
            return True
    return False


def _iterates(ref: Ref, index: int, files: ProjectFiles, settings: Settings) -> bool:
    """Project function ``ref``, called with positional argument ``index`` (no ``self``), iterates it."""
    s = summary_of(Path(ref[0]), files, settings)
    f = s.function(ref[1]) if s is not None else None
    return f is not None and _def_index(s, ref, f, index) in f.iterated_params


def _takes_loader(ref: Ref, index: int, origin: bool, files: ProjectFiles, settings: Settings) -> bool:
    """Project function ``ref`` called with a loader as positional argument ``index``
    (without ``self``) gives it back (``origin``) or trains on it (:func:`_passed_on`)."""
    s = summary_of(Path(ref[0]), files, settings)
    if not origin and s is not None and s.cls(ref[1]) is not None:  # a class: its __init__ runs
        init = _method_table(ref, files, settings).get("__init__")
        if not init:
            return False
        ref = init[0]
        s = summary_of(Path(ref[0]), files, settings)
    f = s.function(ref[1]) if s is not None else None
    if f is None and s is not None and "." in ref[1] and s.cls(ref[1].partition(".")[0]) is not None:
        head, _, method = ref[1].partition(".")  # Sub.train_epoch inherited: the base's def
        found = _method_table((ref[0], head), files, settings).get(method)
        if found:
            ref = found[0]
            s = summary_of(Path(ref[0]), files, settings)
            f = s.function(ref[1]) if s is not None else None
    if f is None:
        return False
    i = _def_index(s, ref, f, index)
    if origin:
        return f.passes_loader == i
    return i in f.fed_params and _xla_caller(ref[0], ref[1], files, settings)


_SELF_SITES: dict[tuple, dict[str, dict[str, tuple[CallFacts, ...]]]] = {}
#: (root, settings) -> {launching file: its LaunchSetup with ``device_random`` from dropout
#: in a class of another module its launched code builds}
_OWN_SETUPS: dict[tuple, dict[str, LaunchSetup]] = {}
#: (file, qual, settings) -> the calls of that function whose result feeds a step loop,
#: directly or returned by their callers up to one that does (``callers_lookup``'s ``fed``)
_FED: dict[tuple, tuple] = {}


def _self_site_calls(files: ProjectFiles, settings: Settings) -> dict[str, dict[str, tuple[CallFacts, ...]]]:
    """``{file: {"Cls.m": (CallFacts, ...)}}``: the ``self.m(...)`` calls inside loops of
    methods that launched code reaches on objects of known classes (:data:`_SELF_CLASSES`;
    :attr:`~.summary.FunctionFacts.self_sites`), by the method ``m`` each runs on such an
    object (the class's own or inherited ``m``: an override in another module), when that
    is in another module than the call. Where the call runs is settled here, with the
    classes: its innermost loop that is a training step loop, the loop's own body visibly
    running the backward or an optimizer step, or calling on ``self`` a method that runs
    both once per call on that class (``loss = self.training_step(batch)`` with the TPU
    subclass's override), gives ``in_step`` (and ``gated`` under that loop's step gate);
    a call in other loops only is ``in_loop`` (a step when the callee steps once per call).
    Built once per (root, settings), linear in the reached (method, class) pairs and their
    calls."""
    key = (files.root, settings)
    found = _SELF_SITES.get(key)
    if found is not None:
        return found
    _SELF_SITES[key] = {}  # asked again while this one is built: none
    _SELF_SITES_LOCAL[key] = {}
    _reach_index(files, settings)
    index: dict[str, dict[str, list[CallFacts]]] = {}
    local: dict[str, dict[str, list[CallFacts]]] = {}  # the same-module ones (:data:`_SELF_SITES_LOCAL`)
    for file, quals in sorted(_SELF_CLASSES.get(key, {}).items()):
        s = summary_of(Path(file), files, settings)
        for qual, classes in quals.items():
            f = s.function(qual) if s is not None else None
            if f is None or not f.self_sites:
                continue
            for cls in sorted(c for c in classes if c is not None):
                table = _method_table(cls, files, settings)
                stepping: dict[str, bool] = {}

                def steps(m: str) -> bool:  # m of this class runs the backward and an update once per call
                    if m not in stepping:
                        targets = table.get(m, ())
                        h = helper_facts(targets[0], files, settings) if targets else None
                        stepping[m] = h is not None and h.steps_once
                    return stepping[m]

                def updates(m: str) -> bool:  # m of this class runs an optimizer update once per call
                    targets = table.get(m, ())  # (not in a loop of its own: that is an epoch function)
                    own = _function_facts(targets[0], files, settings) if targets else None
                    return own is not None and own.updates and not own.holds_step_loop

                for site in f.self_sites:
                    targets = table.get(site.method, ())
                    if not targets:
                        continue
                    target = targets[0]
                    # a loop calling on self a method that updates the optimizer is the step loop
                    # (self.optimizer_step() under `if accumulator.ready():`, the backward in a helper)
                    step = next((i for i in range(len(site.loops) - 1, -1, -1)
                                 if site.loops[i][0] or any(steps(m) or updates(m) for m in site.loops[i][1])), None)
                    if target[0] == file:  # in the caller's module: its own model dispatches there; kept
                        if step is not None and not site.loops[step][3]:  # for where the callee's calls run
                            local.setdefault(file, {}).setdefault(target[1], []).append(
                                CallFacts(target, site.line, site.args, site.kwargs, site.splat, in_step=True,
                                          gated=site.loops[step][2], caller=qual))
                        continue
                    if step is not None:  # (once, or after the pass's sync: not the step)
                        in_step, in_loop = not site.loops[step][3], False
                        gated = in_step and site.loops[step][2]
                    else:
                        in_step, in_loop = False, bool(site.loops)
                        gated = in_loop and site.loops[-1][2]
                    feeds = site.feeds is not None and (site.feeds[0] or any(steps(m) for m in site.feeds[1]))
                    index.setdefault(target[0], {}).setdefault(target[1], []).append(
                        CallFacts(target, site.line, site.args, site.kwargs, site.splat, feeds_step=feeds,
                                  in_step=in_step, gated=gated, caller=qual, in_loop=in_loop,
                                  reiterated=site.reiterated))
    found = _SELF_SITES[key] = {file: {q: tuple(calls) for q, calls in by.items()} for file, by in index.items()}
    _SELF_SITES_LOCAL[key] = {file: {q: tuple(calls) for q, calls in by.items()} for file, by in local.items()}
    return found


#: (root, settings) -> the ``self.m(...)`` calls of :func:`_self_site_calls` in a step loop whose
#: ``m`` is in the caller's own module (its model answers for the call itself; the project
#: layer asks them only for where the callee's own calls run: :func:`_step_code_calls`)
_SELF_SITES_LOCAL: dict[tuple, dict] = {}


_WORD = re.compile(r"\w+")
#: a name called or passed on in a package's ``__init__.py`` (``build(`` / ``f=build`` / ``run(build)``)
_CALLED_WORD = re.compile(r"\b(\w+)\s*\(|[(,=]\s*(\w+)\s*[,)]")
#: import statements and ``__all__`` of a package's ``__init__.py`` (the re-exports)
_IMPORT_LINES = re.compile(r"^[ \t]*(?:from[ \t]+\S+[ \t]+import[ \t]+(?:\([^)]*\)|[^\n]*)|import[ \t][^\n]*"
                           r"|__all__[ \t]*[+]?=[ \t]*(?:\[[^\]]*\]|\([^)]*\)))", re.MULTILINE)
#: how many importers of a module are read for the objects they hand on
MAX_DISPATCH_MODULES = 64


def _calls_name(path: Path, name: str, files: ProjectFiles) -> bool:
    """The text of project file ``path`` calls something named ``name``
    (:meth:`~.files.ProjectFiles.calling`)."""
    return str(path) in files.calling(name)


def _called_elsewhere(path: Path, name: str, files: ProjectFiles) -> bool:
    """Some other project file calls something named ``name`` (``name(`` or ``.name(``): a
    cheap necessary condition of a call from another module (but ``forward``, called as
    ``model(x)``), a text search of the project's files (:meth:`~.files.ProjectFiles.calling`:
    name by name for the first few names, then one index of every name, once per root).
    Every file counts, also one that never names torch: a framework's trainer module
    (``self.after_step(step)`` in its loop, ``cb.on_step_end(...)``) may be plain Python."""
    return files.called_elsewhere(name, str(path))  # (searched only until a file calls it)


#: id(CallFacts) -> (that CallFacts, file): the module of a call :func:`_dispatched_to` made from
#: a dispatch the reach resolved (kept alive here, so that the id stays its own)
_DISPATCH_FILES: dict[int, tuple] = {}
#: (root, method ref, settings) -> those calls of the method, built once (:func:`_dispatched_to`)
_REACHED_CALLS_OF: dict[tuple, tuple] = {}


def _dispatched_to(path: Path, qual: str, files: ProjectFiles, settings: Settings) -> tuple[CallFacts, ...]:
    """The method calls of other project modules that run method ``qual`` (``Cls.m``) of the
    module at ``path`` on an object handed to them: an importer of the module passes an
    instance of a class that runs this ``m`` (``Cls`` or a subclass that inherits it; a
    list of such instances for ``callbacks=[...]``) to a function or class of a third
    module, whose code calls ``m`` on what that parameter brought in
    (:class:`~.callers.DispatchFacts`: ``for cb in self.callbacks: cb.on_step_end(...)``;
    ``model(x)`` for ``forward``); or an importer that launches through a wrapper handing
    its own ``self`` on calls ``m`` on that object in the launched code (``backend.save(state,
    path)``: ``DispatchFacts.classes``). As :class:`~.callers.CallFacts` with ``target``
    ``(path, qual)``, arguments without ``self``, ``on_device`` when the instance handed on
    was visibly moved to the XLA device. Only importers whose text names torch_xla and
    calls the class (or a subclass, or a builder of it), or calls such a launch wrapper,
    count. Built once per (root, file, method name, settings) for every method of that
    name: :func:`_dispatch_index`."""
    head, _, method = qual.rpartition(".")
    index = _dispatch_index(path, method, files, settings)
    me = (str(path), qual)
    _reach_index(files, settings)  # (the reach resolves dispatches on the objects it follows)
    memo = (files.root, me, settings)
    reached = _REACHED_CALLS_OF.get(memo)
    if reached is None:
        _REACHED_CALLS_OF[memo] = ()  # (asked again while this one is built: none)
        seen = _REACH_DISPATCHES.get((files.root, settings), {}).get(me, ())
        out = []
        for file, d in sorted(seen, key=lambda x: (x[0], x[1].line)):
            if not _xla_caller(file, d.caller, files, settings):
                continue
            in_step, gated = _reached_step(d, file, files, settings)
            cf = CallFacts(me, d.line, d.args, d.kwargs, d.splat, in_step=in_step, gated=gated, caller=d.caller,
                           feeds_step=d.feeds_step, feeds_via=d.feeds_via)
            _DISPATCH_FILES[id(cf)] = (cf, file)  # (where it is: its loader questions, _fed_calls)
            out.append(cf)
        reached = _REACHED_CALLS_OF[memo] = tuple(out)
    if me not in index:
        return reached
    builders = defs.instance_names(path, head, files)
    lines = {(c.line, c.caller) for c in reached}
    return reached + tuple(cf for cf, imp in index[me]  # (None: an object a launch wrapper handed on)
                           if (imp is None or any(_calls_name(imp, name, files) for name in builders))
                           and (cf.line, cf.caller) not in lines)


def _reached_step(d, file: str, files: ProjectFiles, settings: Settings) -> tuple[bool, bool]:
    """``(in_step, gated)`` of a dispatch ``d`` of module ``file`` the reach resolved: in a step
    loop of its function (also one whose resolved method updates: :func:`_loop_updates`), or
    in a function a step runs once per step (:func:`_dispatch_step`)."""
    if d.in_step or _loop_updates(file, d, files, settings):
        return True, d.gated
    return _dispatch_step(d, file, files, settings)


def _dispatch_index(path: Path, method: str, files: ProjectFiles, settings: Settings) -> dict:
    """``{(file, "Cls.m"): [(CallFacts, importer or None), ...]}``: for every method named
    ``method`` of the module at ``path`` that instances handed on by the importers of that
    module run, or that objects a launch wrapper hands on run (importer ``None``; see
    :func:`_dispatched_to`), the dispatched calls that reach it: the part of each importer's
    :func:`_importer_dispatches` that falls in ``path``."""
    key = (files.root, str(path), method, settings)
    found = _DISPATCHED.get(key)
    if found is not None:
        return found
    found = _DISPATCHED[key] = {}  # asked again while this one is built: none
    # the importers, and theirs: a launching script hands on an instance a builder module
    # of its imports made (backend = get_backend(...); backend.launch(worker, ...))
    near = sorted(files.importers(path))
    importers = list(near) + [path]  # (and the module itself: a script hands its own callbacks on)
    for imp in near:
        importers.extend(q for q in sorted(files.importers(imp)) if q not in importers and q != path)
    for imp in importers[:MAX_DISPATCH_MODULES]:
        for ref, sites in _importer_dispatches(imp, method, files, settings).get(str(path), {}).items():
            found.setdefault(ref, []).extend(sites)
    return found


_IMPORTER_DISPATCHED: dict[tuple, dict] = {}


def _importer_dispatches(imp: Path, method: str, files: ProjectFiles, settings: Settings) -> dict:
    """``{file: {(file, "Cls.m"): [(CallFacts, imp or None), ...]}}``: the methods named
    ``method``, in every project module, that the objects importer ``imp`` hands on run
    (an instance or a list of instances passed to a function or class of a third module
    whose code calls ``method`` on that parameter), or that an object a launch wrapper
    hands to ``imp``'s launched code runs (``None``). Built once per (root, importer,
    method, settings) for all the modules it reaches, so N modules sharing one importer
    cost one pass over its calls, not N."""
    key = (files.root, str(imp), method, settings)
    found = _IMPORTER_DISPATCHED.get(key)
    if found is not None:
        return found
    found = _IMPORTER_DISPATCHED[key] = {}  # asked again while this one is built: none
    text = files.text(imp)
    if text is None:
        return found
    handed = "torch_xla" in text
    wrapped = any(pos >= 0 and f".{name}(" in text for name, _, pos in launcher_selves_for(imp, files))
    if not handed and not wrapped:
        return found  # (an importer that neither names torch_xla nor gets an object from a launch calls none)
    methods = ("__call__", "forward") if method == "forward" else (method,)
    s = summary_of(imp, files, settings)

    def add(ref: Ref, call: CallFacts, origin: Path | None) -> None:
        found.setdefault(ref[0], {}).setdefault(ref, []).append((call, origin))

    def runs(a) -> bool:
        return bool(a.refs) and bool(_runs(a.refs, method, files, settings))

    for d in s.dispatches if s is not None and wrapped else ():  # backend.save(...) on a wrapper's self
        if d.classes and d.method in methods:
            for ref in _runs(d.classes, method, files, settings):
                add(ref, CallFacts(ref, d.line, d.args, d.kwargs, d.splat, in_step=d.in_step, gated=d.gated), None)
    # (call, what it passes, the importer credited): a call handing on what an earlier one
    # passed to its function's parameter (Learner(callbacks=...) -> CallbackHandler(callbacks))
    # continues the walk, a bounded number of hops
    # (an instance whose classes run no method of that name adds nothing, here or where it is
    # handed on -- every add is one of _runs(a.refs, method) -- so it is not followed)
    todo = [(cf, [(i, None, a) for i, a in enumerate(cf.args) if a.kind in (INSTANCE, INSTANCES) and runs(a)]
             + [(None, k, a) for k, a in cf.kwargs if a.kind in (INSTANCE, INSTANCES) and runs(a)],
             None if cf.launched else imp, 0)  # (a launch wrapper's self: built where the wrapper is)
            for cf in (s.calls_into if s is not None and (handed or wrapped) else ())
            if handed or cf.launched]  # (backend.launch(worker, ...) hands the wrapper's self on)
    while todo:
        cf, passed, origin, hops = todo.pop()
        if not passed:
            continue
        file, target = _reexported(cf.target, files, settings)
        other = summary_of(Path(file), files, settings)
        if other is None:
            continue
        shift = 0
        if "." not in target and other.cls(target) is not None:
            # a constructor call: the parameters of the __init__ that runs (a base's, inherited)
            init = _method_table((file, target), files, settings).get("__init__")
            if not init:
                continue
            (file, target), shift = init[0], 1
            other = summary_of(Path(file), files, settings)
            if other is None:
                continue
        elif "." in target and other.cls(target.rpartition(".")[0]) is not None:
            found_m = [r for r in _functions_of((file, target), files, settings)]
            if not found_m:
                continue
            (file, target), shift = found_m[0], 1  # a method (super().__init__(...)): its def's, self first
            other = summary_of(Path(file), files, settings)
            if other is None:
                continue
        params = other.function(target).params if other.function(target) is not None else ()
        for d in other.dispatches:
            if d.origin != target or (d.method not in methods and not d.method_param):
                continue
            for i, k, a in passed:
                if d.element == (a.kind == INSTANCES) and (k == d.param or (i is not None and i + shift == d.index)):
                    for call in _dispatched_calls(d, file, other, methods, files, settings):
                        call = dataclasses.replace(call, on_device=a.name == "device")
                        for ref in _runs(a.refs, method, files, settings):
                            add(ref, dataclasses.replace(call, target=ref), origin)
                    break
        names = {}
        for i, k, a in passed:  # the parameter of `target` each one arrives in
            name = k if k is not None else params[i + shift] if i is not None and i + shift < len(params) else None
            if name is not None:
                names[name] = a
        for d in other.dispatches:  # self._cbs.append(cb) in add(self, cb): cb joins that list
            if d.caller != target or d.element or d.method not in _ADDS or not d.args:
                continue
            x = d.args[-1] if d.method == "insert" else d.args[0]
            a = names.get(x.name) if x.kind == PARAM and x.refs and x.refs[0] == (file, target) else None
            if a is None or a.kind != INSTANCE:
                continue
            for e in other.dispatches:
                if e.origin == d.origin and e.param == d.param and e.element \
                        and (e.method in methods or e.method_param):
                    for call in _dispatched_calls(e, file, other, methods, files, settings):
                        for ref in _runs(a.refs, method, files, settings):
                            add(ref, dataclasses.replace(call, target=ref), origin)
        if hops >= MAX_HAND_ON:
            continue
        for onward in other.calls_into:
            if onward.caller != target or onward.escape:
                continue
            again = [(j, None, names[x.name]) for j, x in enumerate(onward.args)
                     if x.kind == PARAM and x.name in names and x.refs[0] == (file, target)]
            again += [(None, n, names[x.name]) for n, x in onward.kwargs
                      if x.kind == PARAM and x.name in names and x.refs[0] == (file, target)]
            if again:
                todo.append((onward, again, None, hops + 1))  # (None: the instances were built elsewhere)
    return found


def _dispatched_calls(d, file: str, other: ModuleSummary, methods: tuple, files: ProjectFiles,
                      settings: Settings) -> list:
    """The :class:`CallFacts` (target unset) dispatched call ``d`` of the module in ``file``
    (summary ``other``) makes of a method named in ``methods``: itself, with its step
    context (:func:`_dispatch_step`) and its parameters' values resolved; for
    ``getattr(cb, event)(*args)`` (``d.method_param``), one per call of its function that
    names such a method with a string literal (``fire("on_step_end", self, step, loss)``),
    with that call's step context and, when ``d`` forwards its function's ``*args`` /
    ``**kwargs``, that call's further arguments."""
    if not d.method_param:
        step, gated = _dispatch_step(d, file, files, settings)
        return [CallFacts((), d.line, tuple(resolve_arg(x, files, settings) for x in d.args),
                          tuple((n, resolve_arg(x, files, settings)) for n, x in d.kwargs), d.splat,
                          in_step=step, gated=gated)]
    f = other.function(d.caller)
    if f is None or d.method_param not in f.params:
        return []
    head = d.caller.rpartition(".")[0]
    own = 1 if head and other.cls(head) is not None else 0  # a method's callers pass no self
    index = f.params.index(d.method_param) - own
    named = set(f.params)
    out = []
    calls = list(_callers_of(Path(file), files, settings).calls.get(d.caller, ()))
    if "." in d.caller:  # self.handler.fire(...) on a handler the trainer's callers pass
        calls += _dispatched_to(Path(file), d.caller, files, settings)
        # self.fire("on_step_end", ...) in the class's own step loop (on the objects the reach knows)
        _self_site_calls(files, settings)
        calls += _SELF_SITES_LOCAL.get((files.root, settings), {}).get(file, {}).get(d.caller, ())
    for c in calls:
        event = c.argument(index, d.method_param)
        if event is None or event.kind != "const" or event.name not in methods:
            continue
        c = _resolve_call(c, files, settings)
        args = tuple(resolve_arg(x, files, settings) for x in d.args)
        kwargs = tuple((n, resolve_arg(x, files, settings)) for n, x in d.kwargs)
        splat = d.splat
        if d.forwards:  # (*args, **kwargs handed on: the caller's arguments past the named ones)
            args += tuple(c.args[len(f.params) - own:])
            kwargs += tuple((n, x) for n, x in c.kwargs if n not in named)
            splat = c.splat
        out.append(CallFacts((), d.line, args, kwargs, splat, in_step=c.in_step, gated=c.gated or d.gated))
    return out


#: the list methods that add an element (``callbacks.append(cb)``)
_ADDS = frozenset({"append", "add", "insert"})

#: how many calls a list of instances is followed through, from the call that builds it to
#: the one whose function dispatches on it (``Learner(callbacks=...)`` then
#: ``CallbackHandler(callbacks)``: one hop)
MAX_HAND_ON = 3


def _dispatch_step(d, file: str, files: ProjectFiles, settings: Settings) -> tuple[bool, bool]:
    """``(in_step, gated)`` of dispatched call ``d`` of the module in ``file``: its own
    (a step loop of its function), or its function's (:attr:`~.callers.DispatchFacts.caller`)
    when another module's step runs that function once per step
    (``self.cbs.on_step_end(self)`` in the learner's step loop runs the handler's
    ``on_step_end``, whose loop over the callbacks calls each one's)."""
    if d.in_step or not d.caller:
        return d.in_step, d.gated
    calls = _step_code_calls(file, d.caller, files, settings)
    return (bool(calls), bool(calls) and (d.gated or all(c.gated for c in calls)))


_STEP_CODE: dict[tuple, tuple] = {}


def _step_code_calls(file: str, qual: str, files: ProjectFiles, settings: Settings) -> tuple:
    """The calls of other modules that run function ``qual`` of ``file`` once per training
    step: their calls of it in a step loop (``CallFacts.in_step``: ``self.cbs.on_step_end(self)``
    in the learner's loop) and, for a method, a base class's ``self.m(...)`` in a step loop
    (:func:`_self_site_calls`). Not through other dispatched calls: the dispatch index asks
    this while it is built, and an answer must not depend on the order of the questions.
    Memoised."""
    key = (file, qual, settings)
    found = _STEP_CODE.get(key)
    if found is None:
        _STEP_CODE[key] = ()  # (asked again while this one is built: none)
        calls = _callers_of(Path(file), files, settings).calls.get(qual, ())
        found = tuple(c for c in calls if c.in_step)
        if "." in qual:
            found += _self_site_calls(files, settings).get(file, {}).get(qual, ()) \
                + _SELF_SITES_LOCAL.get((files.root, settings), {}).get(file, {}).get(qual, ()) \
                + _held_object_steps(file, qual, files, settings)
            # the reach's resolved calls in a step loop (self.module.training_step(batch) on the
            # launched module): settled before any question, so no order dependence
            _reach_index(files, settings)
            me = (file, qual)
            found += tuple(CallFacts(me, d.line, d.args, d.kwargs, d.splat, in_step=True, gated=d.gated, caller=d.caller)
                           for f, d in sorted(_REACH_DISPATCHES.get((files.root, settings), {}).get(me, ()),
                                              key=lambda x: (x[0], x[1].line))
                           if (d.in_step or _loop_updates(f, d, files, settings)) and _xla_caller(f, d.caller, files, settings))
        _STEP_CODE[key] = found
    return found


def _held_object_steps(file: str, qual: str, files: ProjectFiles, settings: Settings) -> tuple:
    """The method calls in other modules' step loops on an object a parameter brought in
    that run method ``qual`` of ``file`` (``self.plugins.step_end(self, step, loss)`` with
    ``self.plugins = plugins`` and the script's ``StepTrainer(model, opt,
    PluginManager([...]))``): their receivers' classes are what the callers pass
    (:func:`resolve_arg`), for a parameter of a plain function or of a constructor only (a
    method's callers would be asked through the dispatch index this serves)."""
    method = qual.rsplit(".", 1)[-1]
    out = []
    for other in sorted(files.calling(method)):
        if other == file:
            continue
        s = summary_of(Path(other), files, settings)
        for d in s.dispatches if s is not None else ():
            if d.method != method or not d.in_step or ("." in d.origin and not d.origin.endswith(".__init__")):
                continue
            v = resolve_arg(ArgFacts(PARAM, d.param, refs=((other, d.origin),)), files, settings)
            if v.kind != (INSTANCES if d.element else INSTANCE) or not v.refs:
                continue
            if (file, qual) in _runs(v.refs, method, files, settings):
                out.append(CallFacts((file, qual), d.line, d.args, d.kwargs, d.splat, in_step=True,
                                     gated=d.gated, caller=d.caller))
    return tuple(out)


_RESOLVED: dict[tuple, ArgFacts] = {}
_UNKNOWN = ArgFacts("unknown")
#: how many functions a parameter handed on as it came is followed back through
MAX_PARAM_DEPTH = 4


def resolve_arg(arg: ArgFacts, files: ProjectFiles, settings: Settings, depth: int = 0) -> ArgFacts:
    """What a :data:`~.callers.PARAM` argument is: what every caller of its function passes
    for that parameter, where XLA code runs (the calls :func:`callers_lookup` gives with
    ``xla_only``), when they agree (instances of project classes join their classes); else
    unknown. Any other argument as it is. Followed :data:`MAX_PARAM_DEPTH` functions back,
    memoised per (function, parameter). A :data:`~.callers.RECV_BATCH` is a device tensor
    when every method the reach resolved its call to returns a device loader."""
    if arg.kind == RECV_BATCH and arg.refs:
        file, qual = arg.refs[0]
        line, _, chain = arg.name.partition(":")
        facts = [_function_facts(r, files, settings) for r in _resolved_at(file, qual, int(line), chain, files, settings)]
        return _DEVICE_TENSOR if facts and all(f is not None and f.returns_loader == "device" for f in facts) \
            else _UNKNOWN
    if arg.kind == RESULT and arg.refs:  # build_train_loader(cfg, dev): what every return gives
        targets = _functions_of(arg.refs[0], files, settings)
        facts = _function_facts(targets[0], files, settings) if len(targets) == 1 else None
        kind = facts.returns_loader if facts is not None else ""
        return _DEVICE_LOADER if kind == "device" else _PLAIN_LOADER if kind == "plain" else _UNKNOWN
    if arg.kind != PARAM or not arg.refs:
        return arg
    file, qual = arg.refs[0]
    key = (file, qual, arg.name, settings)
    if key in _RESOLVED:
        return _RESOLVED[key]
    _RESOLVED[key] = _UNKNOWN  # (a cycle of functions handing it on: unknown)
    found = _UNKNOWN
    s = summary_of(Path(file), files, settings) if depth < MAX_PARAM_DEPTH else None
    f = s.function(qual) if s is not None else None
    if f is not None and arg.name in f.params:
        index = f.params.index(arg.name)
        head, _, last = qual.rpartition(".")
        asked = qual
        if head and s.cls(head) is not None:
            index -= 1  # a method's callers pass no self
            if last == "__init__":
                asked = head  # Learner(...) fills __init__
        lookup = callers_lookup(file, settings)
        calls = lookup(asked, partial=True, xla_only=True) if lookup is not None else None
        values = []
        for c in calls or ():
            a = c.argument(index, arg.name)
            if a is None:
                values = []
                break
            values.append(resolve_arg(a, files, settings, depth + 1))
        found = _join(values)
    if found.kind == "unknown":
        found = _reach_objects(file, qual, arg.name, files, settings)
    _RESOLVED[key] = found
    return found


def _reach_objects(file: str, qual: str, name: str, files: ProjectFiles, settings: Settings) -> ArgFacts:
    """What the reach saw parameter ``name`` of ``(file, qual)`` hold in launched code (the
    objects a script built and handed through a framework's launch: :func:`_dispatched_callees`),
    as an :data:`INSTANCE` / :data:`INSTANCES` argument of their classes; unknown when the
    values are not all one kind or none was seen."""
    params = _PARAM_OBJECTS.get((files.root, settings))
    if params is None:  # (asked with the module's launch wrappers added: the index is the run's settings')
        params = next((v for (root, s), v in _PARAM_OBJECTS.items()
                       if root == files.root and dataclasses.replace(s, launchers=settings.launchers) == settings), {})
    seen = params.get((file, qual, name))
    if not seen or len({v[0] for v in seen}) != 1:
        return _UNKNOWN
    kind = next(iter(seen))[0]
    refs = [v[1] for v in seen] if kind == "obj" else [o[1] for v in seen for o in v[1]]
    return ArgFacts(INSTANCE if kind == "obj" else INSTANCES, refs=tuple(dict.fromkeys(refs)))


def _join(values: list) -> ArgFacts:
    """The one argument fact ``values`` agree on (instances join their classes), else unknown."""
    if not values or any(v.kind in ("unknown", PARAM) for v in values):
        return _UNKNOWN
    first = values[0]
    if first.kind in (INSTANCE, INSTANCES):
        if any(v.kind != first.kind for v in values):
            return _UNKNOWN
        refs = tuple(dict.fromkeys(r for v in values for r in v.refs))
        name = first.name if all(v.name == first.name for v in values) else ""
        return ArgFacts(first.kind, name, refs=refs)
    return first if all(v == first for v in values) else _UNKNOWN


def _resolve_call(cf, files: ProjectFiles, settings: Settings):
    """``cf`` (a :class:`CallFacts`) with its :data:`~.callers.PARAM` arguments resolved
    (:func:`resolve_arg`), and its tensors computed from a parameter (:data:`~.callers.PARAM_TENSOR`,
    a :data:`~.callers.TENSOR` with its parameter) device tensors where that parameter receives
    a device loader or a device tensor; itself when it has none."""
    if not any(_unresolved(a) for a in cf.args) and not any(_unresolved(a) for _, a in cf.kwargs):
        return cf
    return dataclasses.replace(cf, args=tuple(_resolved(a, files, settings) for a in cf.args),
                               kwargs=tuple((n, _resolved(a, files, settings)) for n, a in cf.kwargs))


def _resolved_at(file: str, qual: str, line: int, chain: str, files: ProjectFiles, settings: Settings) -> list:
    """The methods the reach resolved the method call on ``chain`` (``"self.strategy.
    process_dataloader"``) of function ``qual`` of ``file`` at ``line`` to: as an edge on an
    attribute chain (:data:`_REACH_CALLS`) or as a dispatch on an object a parameter brought
    in (:data:`_REACH_DISPATCHES`); sorted, empty when none."""
    _reach_index(files, settings)
    root = (files.root, settings)
    found = set(_REACH_CALLS.get(root, {}).get((file, qual, chain), ()))
    method = chain.rpartition(".")[2]
    for ref, sites in _REACH_DISPATCHES.get(root, {}).items():
        if ref[1].rpartition(".")[2] == method and any(
                f == file and d.caller == qual and d.line == line for f, d in sites):
            found.add(ref)
    return sorted(found)


def _unresolved(a: ArgFacts) -> bool:
    return a.kind in (PARAM, RECV_BATCH, RESULT) or (a.kind in (TENSOR, PARAM_TENSOR) and bool(a.refs))


def _resolved(a: ArgFacts, files: ProjectFiles, settings: Settings) -> ArgFacts:
    if a.kind in (PARAM, RECV_BATCH, RESULT):
        return resolve_arg(a, files, settings)
    if a.kind in (TENSOR, PARAM_TENSOR) and a.refs and a.name:
        source = resolve_arg(ArgFacts(PARAM, a.name, refs=a.refs), files, settings)
        if source.kind in (DEVICE_LOADER, DEVICE_TENSOR):
            return _DEVICE_TENSOR
    return a


_DEVICE_TENSOR = ArgFacts(DEVICE_TENSOR)
_DEVICE_LOADER = ArgFacts(DEVICE_LOADER)
_PLAIN_LOADER = ArgFacts(PLAIN_LOADER)


_RUNS: dict[tuple, frozenset] = {}


def _runs(classes: tuple[Ref, ...], method: str, files: ProjectFiles, settings: Settings) -> frozenset:
    """The project methods named ``method`` that instances of ``classes`` run (their own or
    inherited: :func:`_class_methods`), built once per (classes, method) and process."""
    key = (classes, method, settings)
    found = _RUNS.get(key)
    if found is None:
        found = _RUNS[key] = frozenset(r for cls in classes for r in _class_methods(cls, files, settings)
                                       if r[1].rsplit(".", 1)[-1] == method)
    return found

def _callers_of(path: Path, files: ProjectFiles, settings: Settings) -> _Callers:
    key = (files.root, str(path), settings)
    got = _CALLERS.get(key)
    if got is not None:
        return got
    importers, seen, level = set(), {path}, [path]
    for _ in range(MAX_REEXPORT_DEPTH):
        nxt = []
        for p in level:
            for q in files.importers(p):
                if q not in seen:
                    seen.add(q)
                    importers.add(q)
                    if q.name == "__init__.py":
                        nxt.append(q)  # a package that may re-export: its importers call through it
        level = nxt
    calls: dict[str, list[CallFacts]] = {}
    where: dict[int, str] = {}
    unread: set[str] = set()
    unknown = False
    for q in sorted(importers):
        text = files.text(q)
        if text is None:
            unknown = True
            continue
        if "torch_xla" not in text and not any(f"{n}(" in text for n in launchers_for(q, files)) \
                and str(q) not in _reach_index(files, settings):
            # (one launching through a project wrapper is read, and one the launched code
            # reaches: a framework's trainer that never names torch_xla runs as XLA code)
            if q.name == "__init__.py":  # a package's re-exports name what they hand on: only its calls count
                unread.update(a or b for a, b in _CALLED_WORD.findall(_IMPORT_LINES.sub("", text)))
            else:
                unread.update(_WORD.findall(text))
            continue
        s = summary_of(q, files, settings)
        if s is None:
            unknown = True
            continue
        for qual, cf in _calls_by_file(q, s, files, settings).get(str(path), ()):
            calls.setdefault(qual, []).append(cf)
            where[id(cf)] = str(q)
    found = _CALLERS[key] = _Callers(calls, frozenset(unread), unknown, where)
    return found


_BY_FILE: dict[tuple, dict[str, list]] = {}


def _calls_by_file(q: Path, s: ModuleSummary, files: ProjectFiles, settings: Settings) -> dict[str, list]:
    """``{file: [(qual, CallFacts), ...]}``: importer ``q``'s calls (summary ``s``) by the
    module they call, re-exports followed; once per importer and process, so a script that
    calls N modules is read once, not once per module asked."""
    key = (str(q), id(s), settings)
    found = _BY_FILE.get(key)
    if found is None:
        found = _BY_FILE[key] = {}
        for cf in s.calls_into:
            file, qual = _reexported(cf.target, files, settings)
            found.setdefault(file, []).append((qual, cf))
    return found


def _reexported(ref: Ref, files: ProjectFiles, settings: Settings, depth: int = 0) -> Ref:
    """``ref`` with package ``__init__.py`` re-exports followed to the defining module."""
    file, qual = ref
    if depth > 4 or not file.endswith("__init__.py"):
        return ref
    s = summary_of(Path(file), files, settings)
    head, _, rest = qual.partition(".")
    if s is None or s.function(qual) is not None or s.cls(head) is not None:
        return ref
    exported = s.export(head)
    if exported is None:
        return ref
    return _reexported((exported[0], exported[1] + ("." + rest if rest else "")), files, settings, depth + 1)


_IMPORTED_BEFORE: dict[tuple, str | None] = {}
#: how many modules of module-level imports are followed up from an imported module
MAX_IMPORT_CHAIN = 3


def _type_checking(test: ast.AST) -> bool:
    """``TYPE_CHECKING`` / ``typing.TYPE_CHECKING`` (the test of imports that never run)."""
    return (type(test) is ast.Name and test.id == "TYPE_CHECKING") or (
        type(test) is ast.Attribute and test.attr == "TYPE_CHECKING")


def imported_before_launch(filename: str | None, settings: Settings) -> str | None:
    """The launching module (relative to the root) whose own module-level imports load the
    module ``filename`` -- directly, or through :data:`MAX_IMPORT_CHAIN` modules each
    imported at module level -- and that launches XLA code in several processes
    (``xmp.spawn`` / ``torch_xla.launch`` of a function); so the module's module-level code
    runs in the launching process before its launch. ``None`` when none does, or unknown.
    Imports inside a ``def`` are not counted (they run in the launched process), nor those
    under ``if TYPE_CHECKING:`` or after the module's first ``launch(`` / ``spawn(`` call;
    those under another ``if`` / ``try`` at module level are. Memoised per module and process."""
    found = _module_file(filename, settings)
    if found is None:
        return None
    path, files = found
    try:
        return _imported_by_launcher(path, files, settings, 0)
    except (Exception, RecursionError):  # the project cannot be read: unknown
        return None


def _imported_by_launcher(path: Path, files: ProjectFiles, settings: Settings, depth: int) -> str | None:
    key = (files.root, str(path), settings)
    if key in _IMPORTED_BEFORE:
        return _IMPORTED_BEFORE[key]
    _IMPORTED_BEFORE[key] = None  # (a cycle of imports: none)
    found = None
    for imp in sorted(files.importers(path)):
        if path not in _top_imports(imp, files):
            continue
        text = files.text(imp) or ""
        if "torch_xla" in text and ("spawn(" in text or "launch(" in text):
            s = summary_of(imp, files, settings)
            if s is not None and (s.launched_multi or any(m for _, m, _ in s.launched_out)):
                found = _relative(imp, files.root)
                break
        if depth < MAX_IMPORT_CHAIN:
            found = _imported_by_launcher(imp, files, settings, depth + 1)
            if found is not None:
                break
    _IMPORTED_BEFORE[key] = found
    return found


_TOP_IMPORTS: dict[tuple | None, frozenset] = {}


def _top_imports(path: Path, files: ProjectFiles) -> frozenset:
    """The project files ``path``'s module-level import statements load (also under a
    module-level ``if`` / ``try`` / ``with``, not inside a ``def`` or ``class``): the text of
    those statements read as :meth:`~.files.ProjectFiles.imports_of` reads a file."""
    state = _state(path)
    got = _TOP_IMPORTS.get(state)
    if got is not None:
        return got
    tree = parse_module(path)
    lines: list[str] = []
    launch = min((n.lineno for n in ast.walk(tree) if type(n) is ast.Call and (
        (type(n.func) is ast.Attribute and n.func.attr in ("launch", "spawn"))
        or (type(n.func) is ast.Name and n.func.id in ("launch", "spawn")))), default=None) if tree is not None else None
    todo = list(tree.body) if tree is not None else []
    while todo:
        node = todo.pop()
        t = type(node)
        if t in (ast.Import, ast.ImportFrom):
            if launch is None or node.lineno < launch:  # (an import after the launch runs after it)
                lines.append(ast.unparse(node))
        elif t is ast.If and _type_checking(node.test):
            todo.extend(node.orelse)  # (`if TYPE_CHECKING:` imports never run)
        elif t in (ast.If, ast.Try, ast.With):
            todo.extend(node.body)
            todo.extend(getattr(node, "orelse", ()))
            todo.extend(getattr(node, "finalbody", ()))
            for h in getattr(node, "handlers", ()):
                todo.extend(h.body)
    got = _TOP_IMPORTS[state] = frozenset(files._imported_files(path, "\n".join(lines))) - {path}
    return got


def project_uses_xla(filename: str | None, settings: Settings) -> bool:
    """Whether some module of the project of ``filename`` names torch_xla: the engine asks it
    before it lets a module whose text never mentions torch off its fast path (such a
    module is XLA code only where the project's XLA code reaches it).

    Answered once per root and process by a bytes search over the project's files (none
    when it has more than :data:`~.files.MAX_FILES`); the root is found once per folder.
    ``False`` when project mode is off, ``filename`` is empty or no file, or nothing can be
    read. Never raises.
    """
    if settings.project != "on" or not filename:
        return False
    try:
        folder = os.path.dirname(os.path.abspath(filename))  # string work: no system call per file
        return bool(_xla_files(_root_of(folder)))
    except (Exception, RecursionError):  # a tree that cannot be listed: the fast path stays
        return False


def _xla_files(root: Path) -> tuple[Path, ...]:
    """The first two files of the project at ``root`` whose bytes name torch_xla (two: a file
    may ask whether another does), found once per root and process."""
    found = _XLA_ROOTS.get(root)
    if found is None:
        hits = []
        files = _project(root)
        for p in files.files():
            if _names_xla(p, files):
                hits.append(p)
                if len(hits) == 2:
                    break
        found = _XLA_ROOTS[root] = tuple(hits)
    return found


def project_names_xla(filename: str | None, settings: Settings) -> bool | None:
    """:func:`project_uses_xla` where "no" must be known: ``None`` (unknown) when project
    mode is off, ``filename`` is empty, or the project's files cannot be listed (more than
    :data:`~.files.MAX_FILES`, none found, an error); else whether some other file than
    ``filename`` names torch_xla (the same bytes search, shared per root and process: the
    file's own imports are the rule's to read, and its comments saying "no torch_xla" are
    none). XLA406 fires only on a known "no"."""
    if settings.project != "on" or not filename:
        return None
    try:
        folder = os.path.dirname(os.path.abspath(filename))
        root = _root_of(folder)
        if not _project(root).files():
            return None  # too many files to list, or none: unknown
        me = os.path.realpath(filename)
        return any(os.path.realpath(p) != me for p in _xla_files(root))
    except (Exception, RecursionError):
        return None


def _names_xla(path: Path, files: ProjectFiles | None = None) -> bool:
    """The file's bytes contain ``torch_xla`` (a regular file only: :func:`files.read_bytes`);
    read through its project's ``files`` when given (:meth:`~.files.ProjectFiles.mentions`:
    the bytes kept for the project's other reads of it)."""
    if files is not None:
        return files.mentions(path, b"torch_xla")
    data = read_bytes(path)
    return data is not None and b"torch_xla" in data
