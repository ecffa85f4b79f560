"""Facts about the project's top-level definitions read from the trees alone.

A light index beside the summaries (:mod:`.summary`), per module:

- its classes' bases as dotted names (through the module's imports: ``nn.Module`` is
  ``torch.nn.Module`` under ``import torch.nn as nn``), as classes of the same module, or
  as classes of other project modules: :func:`module_class`;
- its functions that give one parameter back unchanged (``def shard_batch(t, mesh):
  xs.mark_sharding(t, ...); return t``): :func:`returns_param`;
- its functions every ``return`` of which is a torch computation on some parameters
  (``def masked_ce_loss(logits, labels): keep = labels != -1; return F.cross_entropy(
  logits[keep], labels[keep])``): on the device of those arguments, :func:`tensor_of`.

Built from the parsed tree without a model, so a summary may ask it while it is being built
(no summary asks another summary), and import cycles cannot make an answer depend on the
order files are linted in.
"""

from __future__ import annotations

import ast
import dataclasses
import os
import re
import stat
from pathlib import Path

from ..model.data import REPLICA_APIS
from ..model.runtime import chain_parts
from .constants import xla_probe
from .files import ProjectFiles, read_text
from .summary import Ref, _import_bindings, parse_module, resolve_chain

#: base classes whose subclasses are modules (as the model's ``is_module_class`` counts them)
MODULE_BASES = ("torch.nn.", "transformers.", "lightning.", "pytorch_lightning.")
#: how many base-class links one question follows
MAX_DEPTH = 16


@dataclasses.dataclass(frozen=True)
class DefFacts:
    """What the light index says about one name of a project module: a class that
    subclasses ``torch.nn.Module`` (:func:`module_class`), a function that returns its
    parameter at ``returns_param`` unchanged (-1: none), or a function every ``return`` of
    which builds an instance of one project class (``def build_model(): return
    MelanomaNet(...)``: ``returns_class``, :func:`returns_class`), or a module constant
    bound once at the top level to a literal (``DROPOUT = 0.3`` in ``config.py``: ``value``,
    with ``has_value``; :func:`constant`)."""

    module_class: bool = False
    returns_param: int = -1
    returns_class: Ref | None = None
    value: object = None
    has_value: bool = False
    #: the positional parameters whose tensors every ``return`` computes on with torch
    #: operations (:func:`tensor_of`): a device tensor among them makes the result one
    tensor_of: tuple[int, ...] = ()
    #: a probe of an importable torch_xla (``def is_xla_available(): try: import torch_xla``
    #: ...): :func:`.constants.xla_probe`
    xla_probe: bool = False
    #: its own body asks the runtime or the process group for the replica's rank or the
    #: world size (``def get_rank(): return xr.global_ordinal()``): :func:`reads_replica`
    reads_replica: bool = False


NOTHING = DefFacts()


@dataclasses.dataclass(frozen=True)
class _ClassBases:
    dotted: tuple[str, ...]  # bases named through imports of other packages (``torch.nn.Module``)
    local: tuple[str, ...]  # bases that are classes of the same module
    project: tuple[Ref, ...]  # bases that are classes of other project modules


#: file state -> (classes and their bases, functions returning a parameter, project import
#: bindings, functions returning one class's instance: name -> the class's dotted parts,
#: module constants: name -> literal value, functions computing on parameters: name -> indexes,
#: probes of torch_xla)
_INDEX: dict[tuple, tuple[dict[str, _ClassBases], dict[str, int], dict, dict[str, tuple[str, ...]], dict, dict,
                          set]] = {}


def clear_cache() -> None:
    """Forget every module's class index."""
    _INDEX.clear()
    _STORES.clear()
    _STORED.clear()
    _INSTANCE_NAMES.clear()
    _FACTORIES.clear()
    _CLASS_TUPLES.clear()


def def_facts(ref: Ref, files: ProjectFiles) -> DefFacts:
    """:class:`DefFacts` of ``ref`` (``(file, "name")``, through package re-exports);
    :data:`NOTHING` when unknown. Never raises."""
    try:
        if module_class(ref, files):
            return DefFacts(module_class=True)
        index = returns_param(ref, files)
        if index >= 0:
            return DefFacts(returns_param=index)
        computed = tensor_of(ref, files)
        if computed:
            return DefFacts(tensor_of=computed)
        if _probe(ref, files):
            return DefFacts(xla_probe=True)
        if reads_replica(ref, files):
            return DefFacts(reads_replica=True)
        built = returns_class(ref, files)
        if built is not None:
            return DefFacts(returns_class=built)
        found, value = constant(ref, files)
        return DefFacts(value=value, has_value=True) if found else NOTHING
    except (Exception, RecursionError):
        return NOTHING


def constant(ref: Ref, files: ProjectFiles) -> tuple[bool, object]:
    """``(True, value)`` when name ``ref`` of a project module is bound exactly once in the
    module, at its top level, to a literal number, string, bool or ``None`` (a negative
    number too): ``config.DROPOUT``; ``(False, None)`` otherwise (through package
    re-exports), also when the module has a star import or some project file assigns an
    attribute of that name (``config.DROPOUT = 0.0`` in a script). Never raises."""
    try:
        for _ in range(4):
            file, name = ref
            index = _index(Path(file), files)
            if name in index[4]:
                if _attribute_stored(name, files):
                    return False, None  # config.DROPOUT = 0.0 somewhere: not a constant
                return True, index[4][name]
            target = _reexport(Path(file), name, files)
            if target is None:
                return False, None
            ref = target
        return False, None
    except (Exception, RecursionError):
        return False, None


def returns_class(ref: Ref, files: ProjectFiles) -> Ref | None:
    """The project class (``(file, "Cls")``) every ``return`` of top-level function ``ref``
    builds (``return MelanomaNet(pretrained=pretrained)``: a class of the same module or
    one its imports bind to a project module), through package re-exports; ``None`` when
    unknown or mixed. Never raises."""
    try:
        for _ in range(4):  # re-exports
            file, name = ref
            index = _index(Path(file), files)
            found = index[3].get(name)
            if found is not None:
                parts = found
                if len(parts) == 1 and parts[0] in index[0]:
                    return (file, parts[0])
                target = resolve_chain(parts, index[2], files)
                return target if target is not None and "." not in target[1] else None
            target = _reexport(Path(file), name, files)
            if target is None:
                return None
            ref = target
        return None
    except (Exception, RecursionError):
        return None


def instance_class(ref: Ref, files: ProjectFiles) -> Ref | None:
    """The project class whose instance a call of ``ref`` gives: ``ref`` itself when it names
    a class (through package re-exports), the class a builder function returns
    (:func:`returns_class`), else ``None``. Never raises."""
    try:
        for _ in range(4):
            file, name = ref
            index = _index(Path(file), files)
            if name in index[0]:
                return (file, name)
            if name in index[1] or name in index[3]:
                return returns_class((file, name), files)
            target = _reexport(Path(file), name, files)
            if target is None:
                return None
            ref = target
        return None
    except (Exception, RecursionError):
        return None


def instance_names(path: Path, cls: str, files: ProjectFiles) -> frozenset[str]:
    """The names a module that builds an instance of class ``cls`` of the module at
    ``path`` must call: the class, its subclasses in the same module, and the module's
    functions that return one of those (``build_model``). A cheap necessary condition (a
    text test) before another module is read for the instances it hands on. Never raises."""
    try:
        index = _index(path, files)
        table = _INSTANCE_NAMES.get(id(index))
        if table is None or table[0] is not index:
            classes, builders = index[0], index[3]
            children: dict[str, list[str]] = {}
            for name, bases in classes.items():
                for b in bases.local:
                    children.setdefault(b, []).append(name)
            table = (index, children, builders, {})
            _INSTANCE_NAMES[id(index)] = table
        _, children, builders, memo = table
        found = memo.get(cls)
        if found is None:
            names, todo = {cls}, [cls]
            while todo:
                for child in children.get(todo.pop(), ()):
                    if child not in names:
                        names.add(child)
                        todo.append(child)
            names.update(f for f, parts in builders.items() if len(parts) == 1 and parts[0] in names)
            found = memo[cls] = frozenset(names)
        return found
    except (Exception, RecursionError):
        return frozenset((cls,))


def returns_param(ref: Ref, files: ProjectFiles) -> int:
    """The index of the parameter function ``ref`` gives back unchanged from every
    ``return`` (a plain top-level ``def``, no ``yield``, the parameter never rebound); -1
    when none or unknown. Never raises."""
    found = _indexed(ref, files, 1)
    return found if found is not None else -1


def _indexed(ref: Ref, files: ProjectFiles, slot: int):
    """What slot ``slot`` of the light index (:func:`_index`) holds for name ``ref``, through
    package re-exports (four levels): the mapping's value, ``True`` for a name in a set
    slot; ``None`` when none or unknown. Never raises."""
    try:
        for _ in range(4):
            file, name = ref
            table = _index(Path(file), files)[slot]
            if name in table:
                return True if isinstance(table, set) else table[name]
            target = _reexport(Path(file), name, files)
            if target is None:
                return None
            ref = target
        return None
    except (Exception, RecursionError):
        return None


def tensor_of(ref: Ref, files: ProjectFiles) -> tuple[int, ...]:
    """The positional parameters of top-level function ``ref`` whose tensors every
    ``return`` computes on with torch operations (:func:`_tensor_params`); ``()`` when none
    or unknown (through package re-exports). Never raises."""
    return _indexed(ref, files, 5) or ()


def reads_replica(ref: Ref, files: ProjectFiles) -> bool:
    """Top-level function ``ref`` calls a rank or world-size API in its own body
    (:data:`flake8_xla.model.data.REPLICA_APIS`, through the module's imports of other
    packages; through re-exports): a dataset that calls it shards itself."""
    return bool(_indexed(ref, files, 7))


def _probe(ref: Ref, files: ProjectFiles) -> bool:
    """Top-level function ``ref`` probes an importable torch_xla (through re-exports)."""
    return bool(_indexed(ref, files, 6))


def module_class(ref: Ref, files: ProjectFiles) -> bool:
    """Class ``ref`` (``(file, "Cls")``) subclasses ``torch.nn.Module`` (or a transformers /
    Lightning module class): through its own bases, classes of its module and of other
    project modules, package re-exports. ``False`` when unknown (an unreadable module, a base
    that resolves to nothing known, more than :data:`MAX_DEPTH` links). Never raises."""
    return bool(_in_bases(ref, files, lambda d: d.startswith(MODULE_BASES)))


def _in_bases(ref: Ref, files: ProjectFiles, wanted) -> str:
    """The first dotted base (named through imports of other packages: ``torch.nn.Module``)
    for which ``wanted`` holds, of class ``ref`` or of a class it subclasses across the
    project (its module's classes, other project modules', package re-exports), searched
    at most :data:`MAX_DEPTH` classes; ``""`` when none, or unknown. Never raises."""
    try:
        todo, seen = [ref], set()
        while todo and len(seen) < MAX_DEPTH:
            file, name = todo.pop()
            if (file, name) in seen:
                continue
            seen.add((file, name))
            bases = _index(Path(file), files)[0].get(name)
            if bases is None:
                target = _reexport(Path(file), name, files)
                if target is not None:
                    todo.append(target)
                continue
            found = next((d for d in bases.dotted if wanted(d)), None)
            if found is not None:
                return found
            todo.extend((file, b) for b in bases.local)
            todo.extend(bases.project)
        return ""
    except (Exception, RecursionError):
        return ""


#: what a subclass of these wraps its module in: ``"ddp"`` / ``"fsdp"`` (the model's WRAPPERS)
WRAP_BASES = {"torch.nn.parallel.DistributedDataParallel": "ddp",
              "torch.nn.parallel.distributed.DistributedDataParallel": "ddp",
              "torch_xla.distributed.fsdp.XlaFullyShardedDataParallel": "fsdp",
              "torch_xla.distributed.fsdp.xla_fully_sharded_data_parallel.XlaFullyShardedDataParallel": "fsdp"}


def wrap_kind(ref: Ref, files: ProjectFiles) -> str:
    """``"ddp"`` / ``"fsdp"`` when class ``ref`` subclasses torch's ``DistributedDataParallel``
    or torch_xla's ``XlaFullyShardedDataParallel`` (through its bases across the project, as
    :func:`module_class`): building one wraps its module, as the base does; ``""``
    otherwise or when unknown. Never raises."""
    return WRAP_BASES.get(_in_bases(ref, files, WRAP_BASES.__contains__), "")


def _reexport(path: Path, name: str, files: ProjectFiles) -> Ref | None:
    """Where ``name`` of the module at ``path`` comes from when its imports bind it to
    another project module (a package ``__init__.py`` re-export); None otherwise."""
    return resolve_chain((name,), _index(path, files)[2], files)


def _index(path: Path, files: ProjectFiles) -> tuple[dict[str, _ClassBases], dict[str, int], dict, dict, dict, dict, set, set]:
    """The module's top-level classes with their bases, its functions that return a
    parameter unchanged, the names its imports bind to project modules, its functions
    every return of which calls one class (by dotted name), its functions that return a
    torch computation on parameters (:func:`_tensor_params`), its literal constants, and
    its probes of an importable torch_xla (:func:`.constants.xla_probe`)
    (:func:`_constants`), and its functions that ask for the rank or world size
    (:func:`reads_replica`), once per file state."""
    try:
        st = os.stat(path)
    except OSError:
        return {}, {}, {}, {}, {}, {}, set(), set()
    if not stat.S_ISREG(st.st_mode):
        return {}, {}, {}, {}, {}, {}, set(), set()
    key = (str(path), st.st_size, st.st_mtime_ns)
    found = _INDEX.get(key)
    if found is not None:
        return found
    tree = parse_module(path)
    classes: dict[str, _ClassBases] = {}
    identities: dict[str, int] = {}
    builders: dict[str, tuple[str, ...]] = {}
    constants: dict[str, object] = {}
    computes: dict[str, tuple[int, ...]] = {}
    project = _import_bindings(path, tree, files) if tree is not None else {}
    probes: set[str] = set()
    replicas: set[str] = set()
    found = _INDEX[key] = (classes, identities, project, builders, constants, computes, probes, replicas)
    if tree is None:
        return found
    constants.update(_constants(tree))
    external = _external_imports(tree)
    names = {n.name for n in tree.body if type(n) is ast.ClassDef}
    for node in tree.body:
        if type(node) is ast.FunctionDef:
            if xla_probe(node):
                probes.add(node.name)
            if _asks_replica(node, external):
                replicas.add(node.name)
            index = _identity(node)
            if index >= 0:
                identities[node.name] = index
            else:
                computed = _tensor_params(node, external)
                if computed:
                    computes[node.name] = computed
                built = _builds(node)
                if built is not None and (built[0] in names or built[0] in project):
                    builders[node.name] = built
        if type(node) is not ast.ClassDef:
            continue
        dotted, local, out = [], [], []
        for base in node.bases:
            parts = chain_parts(base)
            if parts is None:
                continue
            if len(parts) == 1 and parts[0] in names:
                local.append(parts[0])
            elif parts[0] in project:
                r = resolve_chain(tuple(parts), project, files)
                if r is not None:
                    out.append(r)
            elif parts[0] in external:
                dotted.append(".".join([external[parts[0]], *parts[1:]]))
        classes[node.name] = _ClassBases(tuple(dotted), tuple(local), tuple(out))
    return found


def _identity(func: ast.FunctionDef) -> int:
    """The index of the positional parameter every ``return`` of ``func`` gives back, never
    rebound in its body (assignment, ``del``, loop or ``with`` target, ``global``/``nonlocal``),
    no ``yield``; -1 otherwise. Nested defs and classes are their own."""
    params = [a.arg for a in func.args.posonlyargs + func.args.args]
    returned = None
    todo = list(func.body)
    stores = set()
    while todo:
        node = todo.pop()
        t = type(node)
        if t in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda):
            continue
        if t in (ast.Yield, ast.YieldFrom, ast.Global, ast.Nonlocal):
            return -1
        if t is ast.Return:
            v = node.value
            if type(v) is not ast.Name or v.id not in params or (returned is not None and v.id != returned):
                return -1
            returned = v.id
        elif t is ast.Name and type(node.ctx) is not ast.Load:
            stores.add(node.id)
        todo.extend(ast.iter_child_nodes(node))
    if returned is None or returned in stores:
        return -1
    return params.index(returned)


#: tensor methods whose result is no device tensor (a host read, a size, a move)
_NOT_TENSOR = frozenset({"item", "tolist", "numpy", "cpu", "to", "size", "dim", "numel", "stride", "data_ptr",
                         "element_size", "nelement", "is_contiguous", "get_device", "type", "__len__"})


def _asks_replica(func: ast.FunctionDef, external: dict[str, str]) -> bool:
    """:func:`reads_replica` of one top-level function of at most 16 statements."""
    if len(func.body) > 16:
        return False
    for node in ast.walk(func):
        if type(node) is ast.Call:
            parts = chain_parts(node.func)
            if parts is not None and parts[0] in external \
                    and ".".join([external[parts[0]], *parts[1:]]) in REPLICA_APIS:
                return True
    return False


def _tensor_params(func: ast.FunctionDef, external: dict[str, str]) -> tuple[int, ...]:
    """The positional parameters whose tensors every ``return`` of ``func`` computes on: each
    return value is a torch operation (``torch.*`` / ``torch.nn.functional.*`` through the
    module's imports, not a factory), a tensor method (not a host read or a move), an
    operator, comparison or subscript over parameters or over names bound once, earlier in
    the body's top level, to such a computation. ``()`` when some return is anything else,
    a parameter is rebound, or the function yields. Nested defs are their own."""
    from ..model.tensors import TORCH_FACTORIES, _torch_op

    params = [a.arg for a in func.args.posonlyargs + func.args.args]
    derived: dict[str, frozenset] = {p: frozenset((i,)) for i, p in enumerate(params)}

    def of(e, depth=0) -> frozenset:
        t = type(e)
        if depth > 12:
            return frozenset()
        if t is ast.Name:
            return derived.get(e.id, frozenset())
        if t is ast.Subscript:
            return of(e.value, depth + 1)
        if t is ast.BinOp:
            return of(e.left, depth + 1) | of(e.right, depth + 1)
        if t is ast.UnaryOp and type(e.op) is not ast.Not:
            return of(e.operand, depth + 1)
        if t is ast.Compare and len(e.ops) == 1 and type(e.ops[0]) not in (ast.Is, ast.IsNot, ast.In, ast.NotIn):
            return of(e.left, depth + 1) | of(e.comparators[0], depth + 1)
        if t is ast.Call:
            f = e.func
            parts = chain_parts(f)
            dotted = ".".join([external[parts[0]], *parts[1:]]) if parts and parts[0] in external else None
            if dotted is not None:
                if not _torch_op(dotted) or dotted in TORCH_FACTORIES:
                    return frozenset()
                out = frozenset()
                for a in e.args:
                    out |= of(a.value if type(a) is ast.Starred else a, depth + 1)
                return out
            if type(f) is ast.Attribute and f.attr not in _NOT_TENSOR:
                return of(f.value, depth + 1)
        return frozenset()

    found: frozenset = frozenset()
    returned = False
    for stmt in func.body:
        for node in ast.walk(stmt):
            t = type(node)
            if t in (ast.Yield, ast.YieldFrom, ast.Global, ast.Nonlocal):
                return ()
            if t is ast.Name and type(node.ctx) is not ast.Load and node.id in params:
                return ()  # a parameter rebound
        t = type(stmt)
        if t is ast.Assign and len(stmt.targets) == 1 and type(stmt.targets[0]) is ast.Name:
            name = stmt.targets[0].id
            computed = of(stmt.value)
            # (bound twice, or to something else: not told)
            derived[name] = frozenset() if name in derived else computed
        elif t is ast.Return:
            computed = of(stmt.value) if stmt.value is not None else frozenset()
            if not computed:
                return ()
            found |= computed
            returned = True
        elif any(type(n) is ast.Return for n in ast.walk(stmt)):
            return ()  # a return inside a block: not looked at
    return tuple(sorted(found)) if returned else ()


_STORES: dict[Path, dict[str, list[Path]]] = {}
#: id(a module's index) -> (that index, subclasses by base, builders, {class: instance names})
_INSTANCE_NAMES: dict[int, tuple] = {}
_ATTR_STORE = re.compile(r"\.\s*(\w+)\s*(?:[-+*/%@&|^]|//|\*\*|<<|>>)?=(?!=)")
_STORED: dict[tuple[Path, str], bool] = {}


#: stores by name that a text may hold: ``setattr(cfg, "NAME", ...)``, ``vars(cfg)["NAME"] = ...``
_NAMED_STORE = re.compile(r"""setattr\(\s*[\w.]+\s*,\s*["'](\w+)["']|(?:vars\([\w.]*\)|__dict__)\s*\[\s*["'](\w+)["']\s*\]\s*=""")
#: stores of names no text shows: ``setattr(cfg, name, ...)``, ``vars(cfg).update(...)``, ``globals().update(...)``
_ANY_STORE = re.compile(r"setattr\(|(?:vars|globals)\([\w.]*\)\s*\.\s*update\(|__dict__\s*\.\s*update\(")
#: the key of :func:`_attribute_stores` for files that may store any name
ANY = "*"


def _attribute_stores(files: ProjectFiles) -> dict[str, list[Path]]:
    """The attribute names some project file's text seems to assign (``x.NAME = ...``,
    ``x.NAME += ...``, ``setattr(x, "NAME", ...)``, ``vars(x)["NAME"] = ...``), with those
    files, and under :data:`ANY` the files that may assign any name (``setattr(x, name,
    v)``, ``vars(x).update(...)``): one regular-expression pass over the project's files,
    once per root (a cheap necessary condition: the text of a string matches too)."""
    found = _STORES.get(files.root)
    if found is None:
        found = _STORES[files.root] = {}
        for p in files.files():
            text = read_text(p)
            if text:
                names = set(_ATTR_STORE.findall(text))
                names.update(a or b for a, b in _NAMED_STORE.findall(text))
                if _ANY_STORE.search(text):
                    names.add(ANY)
                for name in names:
                    found.setdefault(name, []).append(p)
    return found


def _stores_in(tree: ast.AST, name: str) -> bool:
    """``tree`` assigns attribute ``name`` of something: ``x.name = ...`` (or ``+=``, ``del``),
    ``setattr(x, "name", ...)``, ``vars(x)["name"] = ...`` / ``x.__dict__["name"] = ...``;
    for :data:`ANY`, a store no text names: ``setattr(x, <not a literal>, ...)``,
    ``vars(x).update(...)``, ``x.__dict__.update(...)``, ``globals().update(...)``."""
    for n in ast.walk(tree):
        t = type(n)
        if t is ast.Attribute and type(n.ctx) is not ast.Load and n.attr == name:
            return True
        if t is ast.Call:
            f = n.func
            if type(f) is ast.Name and f.id == "setattr" and len(n.args) >= 2:
                key = n.args[1]
                literal = type(key) is ast.Constant and type(key.value) is str
                if (literal and key.value == name) or (not literal and name == ANY):
                    return True
            if name == ANY and type(f) is ast.Attribute and f.attr == "update" and _namespace(f.value):
                return True
        if t is ast.Subscript and type(n.ctx) is not ast.Load and _namespace(n.value) \
                and type(n.slice) is ast.Constant and n.slice.value == name:
            return True
    return False


def _namespace(expr) -> bool:
    """``vars(x)``, ``globals()`` or ``x.__dict__``: a module's or object's namespace."""
    if type(expr) is ast.Call and type(expr.func) is ast.Name and expr.func.id in ("vars", "globals"):
        return True
    return type(expr) is ast.Attribute and expr.attr == "__dict__"


def _attribute_stored(name: str, files: ProjectFiles) -> bool:
    """Some project file assigns an attribute ``name`` (``config.DROPOUT = 0.0``,
    ``cfg.lr *= 2``, ``setattr(config, "DROPOUT", p)``) or may assign any
    (:func:`_stores_in`): the files the text pass names are parsed and read (an f-string
    ``"x.NAME={x.NAME}"`` assigns nothing); a file that does not parse counts as one that
    does. Once per (root, name)."""
    key = (files.root, name)
    found = _STORED.get(key)
    if found is None:
        found = False
        stores = _attribute_stores(files)
        for wanted in (name, ANY):
            for p in stores.get(wanted, ()):
                text = read_text(p)
                try:
                    tree = ast.parse(text or "")
                except (SyntaxError, ValueError, RecursionError, MemoryError):
                    found = True
                    break
                if _stores_in(tree, wanted):
                    found = True
                    break
            if found:
                break
        _STORED[key] = found
    return found


def _constants(tree: ast.Module) -> dict[str, object]:
    """Names bound exactly once in the whole module (any scope, any way of binding: an
    assignment, ``+=``, a loop or ``with`` target, an import, a ``def``) by a top-level
    ``NAME = <literal>`` (number, string, bool, ``None``, ``-number``); none when a star
    import or a store of any name (:func:`_stores_in` with :data:`ANY`: ``globals().update``)
    may rebind one. One walk of the tree for all three (it was three walks: every module
    the light index reads pays it)."""
    candidates: dict[str, object] = {}
    for node in tree.body:
        if type(node) is ast.Assign and len(node.targets) == 1 and type(node.targets[0]) is ast.Name:
            v = node.value
            if type(v) is ast.UnaryOp and type(v.op) is ast.USub and type(v.operand) is ast.Constant \
                    and type(v.operand.value) in (int, float):
                candidates[node.targets[0].id] = -v.operand.value
            elif type(v) is ast.Constant and type(v.value) in (int, float, str, bool, type(None)):
                candidates[node.targets[0].id] = v.value
    bound: dict[str, int] = {}
    for node in ast.walk(tree):
        t = type(node)
        if t is ast.Name:
            if type(node.ctx) is not ast.Load and node.id in candidates:
                bound[node.id] = bound.get(node.id, 0) + 1
        elif t is ast.Call:
            f = node.func
            if type(f) is ast.Name and f.id == "setattr" and len(node.args) >= 2:
                key = node.args[1]
                if not (type(key) is ast.Constant and type(key.value) is str) or key.value == ANY:
                    return {}  # setattr(<module>, name, ...): any name may be rebound
            if type(f) is ast.Attribute and f.attr == "update" and _namespace(f.value):
                return {}  # globals().update(...)
        elif t is ast.Subscript:
            if type(node.ctx) is not ast.Load and _namespace(node.value) \
                    and type(node.slice) is ast.Constant and node.slice.value == ANY:
                return {}
        elif t is ast.Attribute:
            if type(node.ctx) is not ast.Load and node.attr == ANY:
                return {}
        elif t in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            if node.name in candidates:
                bound[node.name] = bound.get(node.name, 0) + 1
        elif t is ast.ImportFrom or t is ast.Import:
            for a in node.names:
                if t is ast.ImportFrom and a.name == "*":
                    return {}  # a star import may bind any name
                n = a.asname or a.name.split(".")[0]
                if n in candidates:
                    bound[n] = bound.get(n, 0) + 1
        elif t is ast.Global:
            for n in node.names:
                if n in candidates:
                    bound[n] = bound.get(n, 0) + 2  # written from a function: not a constant
    return {n: v for n, v in candidates.items() if bound.get(n) == 1}


def _builds(func: ast.FunctionDef) -> tuple[str, ...] | None:
    """The dotted name every ``return`` of ``func`` calls (``return MelanomaNet(...)``, or
    ``model = MelanomaNet(...)`` bound once and returned), when there is at least one return,
    all call the same name and there is no ``yield``; ``None`` otherwise. Nested defs and
    classes are their own."""
    found = None
    todo = list(func.body)
    assigned: dict[str, list] = {}  # name -> the values a plain `name = value` binds it to
    returned: list[str] = []
    stores: dict[str, int] = {}
    while todo:
        node = todo.pop()
        t = type(node)
        if t in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda):
            continue
        if t in (ast.Yield, ast.YieldFrom):
            return None
        if t is ast.Assign and len(node.targets) == 1 and type(node.targets[0]) is ast.Name:
            assigned.setdefault(node.targets[0].id, []).append(node.value)
        elif t is ast.Name and type(node.ctx) is not ast.Load:
            stores[node.id] = stores.get(node.id, 0) + 1
        if t is ast.Return:
            v = node.value
            if type(v) is ast.Name:  # model = Net(...); return model
                returned.append(v.id)
                todo.extend(ast.iter_child_nodes(node))
                continue
            parts = chain_parts(v.func) if type(v) is ast.Call else None
            if parts is None or (found is not None and parts != found):
                return None
            found = parts
        todo.extend(ast.iter_child_nodes(node))
    if found is not None and stores.get(found[0]):
        return None  # Net = Other; return Net(): the name is bound in the function
    for name in returned:
        values = assigned.get(name, [])
        if len(values) != 1 or stores.get(name) != 1 or type(values[0]) is not ast.Call:
            return None  # bound more than once, or by something else than one call
        parts = chain_parts(values[0].func)
        if parts is None or (found is not None and parts != found) or stores.get(parts[0]):
            return None
        found = parts
    return tuple(found) if found is not None else None


def _external_imports(tree: ast.Module) -> dict[str, str]:
    """Names the module's top-level absolute imports bind: name -> dotted name."""
    out: dict[str, str] = {}
    for node in tree.body:
        if type(node) is ast.Import:
            for a in node.names:
                if a.asname:
                    out[a.asname] = a.name
                else:
                    out.setdefault(a.name.split(".")[0], a.name.split(".")[0])
        elif type(node) is ast.ImportFrom and not node.level and node.module:
            for a in node.names:
                if a.name != "*":
                    out[a.asname or a.name] = f"{node.module}.{a.name}"
    return out


_FACTORIES: dict[tuple, tuple | None] = {}


def _factory_table(path: Path, name: str, files: ProjectFiles) -> tuple | None:
    """``(params, branches)`` of the top-level function ``name`` of the module at ``path``
    when it is a factory that picks a class by a parameter's constant: each top-level ``if``
    of its body testing ``param == <literal>`` or ``param in (<literals>)`` (``or``-ed tests
    too, :func:`_branch_test`) whose block, with no ``else``, returns one call of a class (``return XLAStrategy(**kwargs)``, the class bound by the module's
    imports or by an import inside the block: ``from .xla import XLAStrategy``) gives a
    branch ``(param, literals, class ref)``; a last plain ``return Cls(...)`` gives the
    branch ``(None, (), ref)`` the other values reach; any other statement holding a
    ``return`` (a test not read, a ``match``, a loop) ends the table with :data:`_UNSEEN`:
    past it nothing is known. ``None`` when it is no such function. Once per file state and
    name."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    key = (str(path), st.st_size, st.st_mtime_ns, name)
    if key in _FACTORIES:
        return _FACTORIES[key]
    _FACTORIES[key] = None
    tree = parse_module(path)
    func = next((n for n in getattr(tree, "body", ()) if type(n) is ast.FunctionDef and n.name == name), None)
    if func is None:
        return None
    index = _index(path, files)
    params = tuple(a.arg for a in func.args.posonlyargs + func.args.args)
    branches = []

    def built(block: list) -> Ref | None:
        ret = block[-1] if block else None
        if type(ret) is not ast.Return or type(ret.value) is not ast.Call:
            return None
        parts = chain_parts(ret.value.func)
        if parts is None:
            return None
        local = [n for n in block if type(n) in (ast.Import, ast.ImportFrom)]
        bindings = dict(index[2])
        if local:
            bindings.update(_import_bindings(path, ast.Module(body=local, type_ignores=[]), files))
        if len(parts) == 1 and parts[0] in index[0] and parts[0] not in bindings:
            return (str(path), parts[0])
        ref = resolve_chain(parts, bindings, files)
        return ref if ref is not None and "." not in ref[1] else None

    for stmt in func.body:
        if type(stmt) is ast.If:
            test = _branch_test(stmt.test, params)
            ref = built(stmt.body) if test is not None else None
            if ref is not None and not stmt.orelse:
                branches.append((test[0], test[1], ref))
                continue
        elif type(stmt) is ast.Return:
            ref = built([stmt])
            branches.append((None, (), ref) if ref is not None else _UNSEEN)
            break
        if any(type(n) in (ast.Return, ast.Yield, ast.YieldFrom) for n in ast.walk(stmt)):
            branches.append(_UNSEEN)  # a return behind a test not read here: what follows is unknown
            break
    found = _FACTORIES[key] = (params, tuple(branches)) if branches else None
    return found


#: a branch of a factory the table cannot read: evaluation stops there (unknown)
_UNSEEN = ("", (), None)


def _branch_test(test: ast.AST, params: tuple[str, ...]) -> tuple[str, tuple] | None:
    """``(param, literals)`` when ``test`` holds exactly when parameter ``param`` equals one of
    ``literals``: ``name == "xla"`` (either side), ``name in ("xla", "tpu")`` (a tuple, list
    or set display of literals), and ``or`` of such tests on one parameter; else ``None``."""
    tests = test.values if type(test) is ast.BoolOp and type(test.op) is ast.Or else [test]
    param, values = None, []
    for t in tests:
        if type(t) is not ast.Compare or len(t.ops) != 1:
            return None
        left, right, op = t.left, t.comparators[0], type(t.ops[0])
        if op is ast.Eq and type(left) is ast.Constant and type(right) is ast.Name:
            left, right = right, left
        if type(left) is not ast.Name or left.id not in params or param not in (None, left.id):
            return None
        if op is ast.Eq and type(right) is ast.Constant:
            values.append(right.value)
        elif op is ast.In and type(right) in (ast.Tuple, ast.List, ast.Set) \
                and all(type(e) is ast.Constant for e in right.elts):
            values.extend(e.value for e in right.elts)
        else:
            return None
        param = left.id
    return (param, tuple(values)) if param is not None else None


def factory_class(ref: Ref, args: tuple, kwargs: dict, files: ProjectFiles) -> Ref | None:
    """The project class a call of factory ``ref`` (``(file, "get_strategy")``) builds when
    its arguments select one branch (:func:`_factory_table`): ``args`` the literal values
    of its positional arguments (``None`` for one that is no literal: unknown), ``kwargs``
    those of its keyword arguments. The first branch whose parameter's value is one of its
    literals; a plain last ``return`` when every branch before it tests a known value that
    fails. ``None`` when unknown (a value not seen, no branch taken). Never raises."""
    try:
        file, name = ref
        table = _factory_table(Path(file), name, files)
        if table is None:
            return None
        params, branches = table
        given = dict(kwargs)
        for i, value in enumerate(args):
            if i < len(params) and value is not None:
                given.setdefault(params[i], value)
        for param, values, cls in branches:
            if cls is None:
                return None  # a branch not read (_UNSEEN): what the call builds is unknown
            if param is None:
                return cls
            if param not in given:
                return None  # the value deciding this branch is unknown
            if given[param] in values:
                return cls
        return None
    except (Exception, RecursionError):
        return None


_CLASS_TUPLES: dict[tuple, tuple | None] = {}


def class_tuple(ref: Ref, files: ProjectFiles) -> tuple[Ref, ...] | None:
    """The project classes a module-level ``NAME = (ClsA, ClsB)`` (or a list) of module
    ``ref[0]`` names, each a class of that module or one its imports name (``DEFAULT_PLUGINS
    = (EMACallback, CheckpointUploader)``), through package re-exports; ``None`` when
    ``ref`` is no such name, is bound more than once in its module, or an element is no
    project class. Never raises."""
    try:
        for _ in range(4):
            file, name = ref
            key = (file, name)
            if key in _CLASS_TUPLES:
                return _CLASS_TUPLES[key]
            path = Path(file)
            tree = parse_module(path)
            if tree is None:
                return None
            bound = [n for n in tree.body if type(n) in (ast.Assign, ast.AnnAssign)
                     and any(type(t) is ast.Name and t.id == name
                             for t in (n.targets if type(n) is ast.Assign else [n.target]))]
            if not bound:
                target = _reexport(path, name, files)
                if target is None:
                    return None
                ref = target
                continue
            _CLASS_TUPLES[key] = None
            if len(bound) != 1 or type(bound[0].value) not in (ast.Tuple, ast.List) \
                    or name in _stored_names(tree, name):
                return None
            index = _index(path, files)
            out = []
            for elt in bound[0].value.elts:
                parts = chain_parts(elt)
                if parts is None:
                    return None
                if len(parts) == 1 and parts[0] in index[0]:
                    out.append((file, parts[0]))
                    continue
                target = resolve_chain(parts, index[2], files)
                cls = instance_class(target, files) if target is not None and "." not in target[1] else None
                if cls is None or cls != _class_itself(target, files):
                    return None
                out.append(cls)
            found = _CLASS_TUPLES[key] = tuple(out) or None
            return found
        return None
    except (Exception, RecursionError):
        return None


def _class_itself(ref: Ref, files: ProjectFiles) -> Ref | None:
    """``ref`` through re-exports when it names a class (not a builder function)."""
    for _ in range(4):
        file, name = ref
        index = _index(Path(file), files)
        if name in index[0]:
            return (file, name)
        target = _reexport(Path(file), name, files)
        if target is None:
            return None
        ref = target
    return None


def _stored_names(tree: ast.Module, name: str) -> set[str]:
    """``{name}`` when the module binds ``name`` anywhere but its top-level assignment
    (a ``global`` rebinding, an augmented assignment, a loop target): then it is no constant."""
    count = 0
    for node in ast.walk(tree):
        if type(node) is ast.Name and node.id == name and type(node.ctx) is not ast.Load:
            count += 1
        elif type(node) is ast.AugAssign and type(node.target) is ast.Name and node.target.id == name:
            count += 1
    return {name} if count > 1 else set()


def is_subclass(cls: Ref, bases: set, files: ProjectFiles, depth: int = 0) -> bool:
    """Class ``cls`` is one of ``bases`` (refs ``(file, "Cls")``) or inherits from one,
    through the light index's base lists (same-module and project bases), a few levels.
    Never raises."""
    try:
        if cls in bases:
            return True
        if depth > 6:
            return False
        file, name = cls
        found = _index(Path(file), files)[0].get(name)
        if found is None:
            return False
        return any(is_subclass((file, b), bases, files, depth + 1) for b in found.local) \
            or any(is_subclass(b, bases, files, depth + 1) for b in found.project)
    except (Exception, RecursionError):
        return False
