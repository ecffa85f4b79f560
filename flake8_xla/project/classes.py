"""Which classes of the project are ``torch.nn.Module`` subclasses, from the trees alone.

A light index beside the summaries (:mod:`.summary`): for each module, its classes' bases
as dotted names (through the module's imports: ``nn.Module`` is ``torch.nn.Module`` under
``import torch.nn as nn``), as classes of the same module, or as classes of other project
modules. Built from the parsed tree without a model, so a summary may ask it while it is
being built (no summary asks another summary), and import cycles cannot make an answer
depend on the order files are linted in.
"""

from __future__ import annotations

import ast
import dataclasses
import os
import stat
from pathlib import Path

from .files import ProjectFiles
from .summary import Ref, _import_bindings, parse_module, resolve_chain

#: base classes whose subclasses are modules (as the model's ``is_module_class`` counts them)
MODULE_BASES = ("torch.nn.", "transformers.", "lightning.", "pytorch_lightning.")
#: how many base-class links one question follows
MAX_DEPTH = 16


@dataclasses.dataclass(frozen=True)
class _ClassBases:
    dotted: tuple[str, ...]  # bases named through imports of other packages (``torch.nn.Module``)
    local: tuple[str, ...]  # bases that are classes of the same module
    project: tuple[Ref, ...]  # bases that are classes of other project modules


_INDEX: dict[tuple, dict[str, _ClassBases]] = {}


def clear_cache() -> None:
    """Forget every module's class index."""
    _INDEX.clear()


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
            index = _classes(Path(file), files)
            bases = index.get(name)
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
    tree = parse_module(path)
    if tree is None:
        return None
    return resolve_chain((name,), _import_bindings(path, tree, files), files)


def _classes(path: Path, files: ProjectFiles) -> dict[str, _ClassBases]:
    """The module's top-level classes and their bases, once per file state."""
    try:
        st = os.stat(path)
    except OSError:
        return {}
    if not stat.S_ISREG(st.st_mode):
        return {}
    key = (str(path), st.st_size, st.st_mtime_ns)
    found = _INDEX.get(key)
    if found is not None:
        return found
    found = _INDEX[key] = {}
    tree = parse_module(path)
    if tree is None:
        return found
    external = _external_imports(tree)
    project = _import_bindings(path, tree, files)
    names = {n.name for n in tree.body if type(n) is ast.ClassDef}
    for node in tree.body:
        if type(node) is not ast.ClassDef:
            continue
        dotted, local, out = [], [], []
        for base in node.bases:
            parts = _chain(base)
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
        found[node.name] = _ClassBases(tuple(dotted), tuple(local), tuple(out))
    return found


def _chain(node: ast.AST) -> list[str] | None:
    parts = []
    while type(node) is ast.Attribute:
        parts.append(node.attr)
        node = node.value
    if type(node) is not ast.Name:
        return None
    parts.append(node.id)
    return parts[::-1]


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
