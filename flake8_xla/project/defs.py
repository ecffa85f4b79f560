"""Facts about the project's top-level definitions read from the trees alone.

A light index beside the summaries (:mod:`.summary`), per module:

- its classes' bases as dotted names (through the module's imports: ``nn.Module`` is
  ``torch.nn.Module`` under ``import torch.nn as nn``), as classes of the same module, or
  as classes of other project modules: :func:`module_class`;
- its functions that give one parameter back unchanged (``def shard_batch(t, mesh):
  xs.mark_sharding(t, ...); return t``): :func:`returns_param`.

Built from the parsed tree without a model, so a summary may ask it while it is being built
(no summary asks another summary), and import cycles cannot make an answer depend on the
order files are linted in.
"""

from __future__ import annotations

import ast
import dataclasses
import os
import stat
from pathlib import Path

from ..model.runtime import chain_parts
from .files import ProjectFiles
from .summary import Ref, _import_bindings, parse_module, resolve_chain

#: base classes whose subclasses are modules (as the model's ``is_module_class`` counts them)
MODULE_BASES = ("torch.nn.", "transformers.", "lightning.", "pytorch_lightning.")
#: how many base-class links one question follows
MAX_DEPTH = 16


@dataclasses.dataclass(frozen=True)
class DefFacts:
    """What the light index says about one name of a project module: a class that
    subclasses ``torch.nn.Module`` (:func:`module_class`), or a function that returns its
    parameter at ``returns_param`` unchanged (-1: none)."""

    module_class: bool = False
    returns_param: int = -1


NOTHING = DefFacts()


@dataclasses.dataclass(frozen=True)
class _ClassBases:
    dotted: tuple[str, ...]  # bases named through imports of other packages (``torch.nn.Module``)
    local: tuple[str, ...]  # bases that are classes of the same module
    project: tuple[Ref, ...]  # bases that are classes of other project modules


#: file state -> (classes and their bases, functions returning a parameter, project import bindings)
_INDEX: dict[tuple, tuple[dict[str, _ClassBases], dict[str, int], dict]] = {}


def clear_cache() -> None:
    """Forget every module's class index."""
    _INDEX.clear()


def def_facts(ref: Ref, files: ProjectFiles) -> DefFacts:
    """:class:`DefFacts` of ``ref`` (``(file, "name")``, through package re-exports);
    :data:`NOTHING` when unknown. Never raises."""
    try:
        if module_class(ref, files):
            return DefFacts(module_class=True)
        index = returns_param(ref, files)
        return DefFacts(returns_param=index) if index >= 0 else NOTHING
    except (Exception, RecursionError):
        return NOTHING


def returns_param(ref: Ref, files: ProjectFiles) -> int:
    """The index of the parameter function ``ref`` gives back unchanged from every
    ``return`` (a plain top-level ``def``, no ``yield``, the parameter never rebound); -1
    when none or unknown. Never raises."""
    try:
        for _ in range(4):  # re-exports
            file, name = ref
            found = _index(Path(file), files)[1].get(name)
            if found is not None:
                return found
            target = _reexport(Path(file), name, files)
            if target is None:
                return -1
            ref = target
        return -1
    except (Exception, RecursionError):
        return -1


def module_class(ref: Ref, files: ProjectFiles) -> bool:
    """Class ``ref`` (``(file, "Cls")``) subclasses ``torch.nn.Module`` (or a transformers /
    Lightning module class): through its own bases, classes of its module and of other
    project modules, package re-exports. ``False`` when unknown (an unreadable module, a base
    that resolves to nothing known, more than :data:`MAX_DEPTH` links). Never raises."""
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
            if any(d.startswith(MODULE_BASES) for d in bases.dotted):
                return True
            todo.extend((file, b) for b in bases.local)
            todo.extend(bases.project)
        return False
    except (Exception, RecursionError):
        return False


def _reexport(path: Path, name: str, files: ProjectFiles) -> Ref | None:
    """Where ``name`` of the module at ``path`` comes from when its imports bind it to
    another project module (a package ``__init__.py`` re-export); None otherwise."""
    return resolve_chain((name,), _index(path, files)[2], files)


def _index(path: Path, files: ProjectFiles) -> tuple[dict[str, _ClassBases], dict[str, int], dict]:
    """The module's top-level classes with their bases, its functions that return a
    parameter unchanged, and the names its imports bind to project modules, once per file
    state."""
    try:
        st = os.stat(path)
    except OSError:
        return {}, {}, {}
    if not stat.S_ISREG(st.st_mode):
        return {}, {}, {}
    key = (str(path), st.st_size, st.st_mtime_ns)
    found = _INDEX.get(key)
    if found is not None:
        return found
    tree = parse_module(path)
    classes: dict[str, _ClassBases] = {}
    identities: dict[str, int] = {}
    project = _import_bindings(path, tree, files) if tree is not None else {}
    found = _INDEX[key] = (classes, identities, project)
    if tree is None:
        return found
    external = _external_imports(tree)
    names = {n.name for n in tree.body if type(n) is ast.ClassDef}
    for node in tree.body:
        if type(node) is ast.FunctionDef:
            index = _identity(node)
            if index >= 0:
                identities[node.name] = index
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
