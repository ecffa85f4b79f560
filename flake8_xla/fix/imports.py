"""Imports for the fixes: reuse the module's own alias, add the documented one once, and
remove an import a fix left unused (never one still used, never the last torch_xla import).
"""

from __future__ import annotations

import ast
import sys

import libcst as cst

from .edits import dotted

#: the documented alias of each module a fix may need (torch_xla's own docs spell them so)
ALIASES = {
    "torch_xla": None,
    "torch_xla.runtime": "xr",
    "torch_xla.core.xla_model": "xm",
    "torch_xla.distributed.xla_multiprocessing": "xmp",
    "torch_xla.distributed.parallel_loader": "pl",
    "torch_xla.distributed.spmd": "xs",
}


_IMPORT_MODULE = ("importlib.import_module", "import_module")


def module_assignment(node) -> tuple[str, str] | None:
    """(name, module) of ``name = importlib.import_module("module")`` (also ``import_module``
    imported from importlib), which binds the module as ``import module as name`` does;
    None for any other statement."""
    if type(node) is not ast.Assign or len(node.targets) != 1 or type(node.targets[0]) is not ast.Name:
        return None
    call = node.value
    if type(call) is not ast.Call or len(call.args) != 1 or call.keywords:
        return None
    func = call.func
    name = func.id if type(func) is ast.Name else \
        f"{func.value.id}.{func.attr}" if type(func) is ast.Attribute and type(func.value) is ast.Name else None
    arg = call.args[0]
    if name not in _IMPORT_MODULE or type(arg) is not ast.Constant or not isinstance(arg.value, str) \
            or not arg.value or arg.value.startswith("."):
        return None
    return node.targets[0].id, arg.value


def bound_names(tree: ast.AST) -> tuple[dict[str, int], set[str]]:
    """(how many times each name is bound by something other than an import, the names
    imports bind) over the whole module, every scope. ``x = importlib.import_module("m")``
    counts as an import."""
    other: dict[str, int] = {}
    imported: set[str] = set()
    as_import: set[int] = set()  # the targets of module assignments

    def bind(name):
        other[name] = other.get(name, 0) + 1

    for node in ast.walk(tree):
        t = type(node)
        if t is ast.Assign and module_assignment(node) is not None:
            as_import.add(id(node.targets[0]))
            imported.add(node.targets[0].id)
        elif t is ast.Name and type(node.ctx) is not ast.Load and id(node) not in as_import:
            bind(node.id)
        elif t in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            bind(node.name)
        elif t is ast.arg:
            bind(node.arg)
        elif t is ast.ExceptHandler and node.name:
            bind(node.name)
        elif t in (ast.Global, ast.Nonlocal):
            for name in node.names:
                bind(name)
        elif t in (ast.MatchAs, ast.MatchStar) and node.name:
            bind(node.name)
        elif t is ast.MatchMapping and node.rest:
            bind(node.rest)
        elif t is ast.Import:
            for a in node.names:
                imported.add(a.asname or a.name.split(".", 1)[0])
        elif t is ast.ImportFrom:
            for a in node.names:
                imported.add(a.asname or a.name)
    return other, imported


def used_names(tree: ast.AST) -> set[str]:
    """Names read anywhere (every scope), and the strings of ``__all__``."""
    used = set()
    for node in ast.walk(tree):
        if type(node) is ast.Name and type(node.ctx) is not ast.Store:
            used.add(node.id)
        elif type(node) is ast.Assign and any(type(t) is ast.Name and t.id == "__all__" for t in node.targets):
            for c in ast.walk(node.value):
                if type(c) is ast.Constant and isinstance(c.value, str):
                    used.add(c.value)
    return used


def dotted_refs(tree: ast.AST) -> set[str]:
    """Every ``a.b.c`` chain read in the module (and each of its prefixes)."""
    out = set()
    for node in ast.walk(tree):
        if type(node) is ast.Attribute:
            parts = []
            cur = node
            while type(cur) is ast.Attribute:
                parts.append(cur.attr)
                cur = cur.value
            if type(cur) is ast.Name:
                parts.append(cur.id)
                out.add(".".join(reversed(parts)))
    return out


def _module_level(tree: ast.Module):
    """Statements that run at module level (not inside a def or class)."""
    todo = list(tree.body)
    while todo:
        node = todo.pop()
        if type(node) in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            continue
        yield node
        for field in ("body", "orelse", "finalbody", "handlers"):
            todo.extend(getattr(node, field, ()) or ())


class Imports:
    """What the module imports, the spellings the fixes use, and the imports to add."""

    def __init__(self, tree: ast.Module):
        self.rebound, self.imported = bound_names(tree)
        self.used_before = used_names(tree)
        #: module -> (how the module-level code spells it, the line of the first such import)
        self.existing: dict[str, tuple[str, int]] = {}

        def add(module, spelled, line):
            if module not in self.existing or line < self.existing[module][1]:
                self.existing[module] = (spelled, line)

        for node in _module_level(tree):
            if type(node) is ast.Import:
                for a in node.names:
                    if a.asname:
                        add(a.name, a.asname, node.lineno)
                    else:
                        add(a.name, a.name, node.lineno)
                        add(a.name.split(".", 1)[0], a.name.split(".", 1)[0], node.lineno)
            elif type(node) is ast.ImportFrom and node.module and not node.level:
                for a in node.names:
                    add(f"{node.module}.{a.name}", a.asname or a.name, node.lineno)
            elif type(node) is ast.Assign:
                bound = module_assignment(node)
                if bound is not None:  # xm = importlib.import_module("torch_xla.core.xla_model")
                    add(bound[1], bound[0], node.lineno)
        # torch_xla imported only under try/if or inside functions (an optional dependency,
        # an availability probe): a fix must not add an unconditional torch_xla import
        unconditional = any(_imports_xla(n) for n in tree.body)
        self.xla_optional = not unconditional and any(_imports_xla(n) for n in ast.walk(tree))
        self.needed: dict[str, str] = {}  # module -> the import statement to add
        self.remove_if_unused: set[str] = set()  # local names whose import goes once unused
        self.remove_module_imports: set[str] = set()  # dotted `import a.b` of removed modules

    def spell(self, module: str, line: int = 1 << 30, deferred: bool = True) -> tuple[str, str | None] | None:
        """(how to spell ``module`` in code at ``line``, the import to add or None), or None
        when no spelling is safe: the alias is bound to something else, or the module's import
        comes after a use that runs at import time (``deferred``: the use is in a function)."""
        have = self.existing.get(module)
        if have is not None:
            spelled, at = have
            if self.rebound.get(spelled.split(".", 1)[0]) or not (deferred or at < line):
                return None
            return spelled, None
        if self.xla_optional and _is_xla(module):
            return None
        alias = ALIASES.get(module, None) if module in ALIASES else None
        if alias is None:  # plain `import a.b`: spelled a.b, binds the root
            root = module.split(".", 1)[0]
            if self.rebound.get(root):
                return None
            return module, f"import {module}"
        if self.rebound.get(alias) or alias in self.imported:
            return None
        return alias, f"import {module} as {alias}"

    def spell_beside(self, module: str, base: str, line: int, tree: ast.Module) -> tuple[str, str, int] | None:
        """Where torch_xla is imported only under a guard (``if is_torch_tpu_available():``,
        ``try:``) or in a function (``xm = importlib.import_module(...)`` inside it), and the
        fix rewrites a use of the name ``base`` that such an import binds: (how to spell
        ``module``, the import statement, the line of ``base``'s import, which the statement
        goes right after, in the same block). The new name is then bound exactly when
        ``base`` is, so the rewritten use at ``line`` runs under the same guard as before.
        None when that does not hold: ``base`` is bound more than once or by something else,
        its import is in a function the use is not in, or the new name is taken."""
        if not (self.xla_optional and _is_xla(module)) or self.rebound.get(base):
            return None
        scopes = [n for n in ast.walk(tree) if type(n) in _SCOPES]

        def scope_of(at: int):  # the innermost function or class around line ``at``
            around = [n for n in scopes if n.lineno < at <= (n.end_lineno or n.lineno)]
            return max(around, key=lambda n: n.lineno) if around else None

        # the use reads the binding of its own scope when that scope has one (a local),
        # else the module's: exactly one such import, before the use
        binders = [n for n in ast.walk(tree) if base in _import_binds(n)]
        here = scope_of(line)
        mine = [n for n in binders if scope_of(n.lineno) is here]
        if not mine and here is not None:
            mine = [n for n in binders if scope_of(n.lineno) is None]
        if len(mine) != 1 or not _imports_xla(mine[0]) or mine[0].lineno >= line:
            return None
        binder = mine[0]
        alias = ALIASES.get(module)
        spelled = alias or module
        name = alias or module.split(".", 1)[0]
        if self.rebound.get(name) or name in self.imported:
            return None
        return spelled, f"import {module} as {alias}" if alias else f"import {module}", binder.lineno

    def spell_from(self, module: str, name: str, line: int = 1 << 30, deferred: bool = True,
                   add: bool = True) -> tuple[str, str | None] | None:
        """(how to spell ``name`` of ``module`` at ``line``, the ``from module import name``
        to add or None): the local name of an existing ``from module import name [as x]``,
        else ``name`` itself when nothing in the module binds or reads it (and ``add``);
        None otherwise."""
        have = self.existing.get(f"{module}.{name}")
        if have is not None:
            local, at = have
            if self.rebound.get(local) or not (deferred or at < line):
                return None
            return local, None
        if not add or self.rebound.get(name) or name in self.imported or name in self.used_before:
            return None
        return name, f"from {module} import {name}"

    def need(self, module: str, statement: str | None) -> None:
        if statement is not None:
            self.needed.setdefault(module, statement)

    # -- after the fixes ------------------------------------------------------------------

    def finish(self, module: cst.Module, new_tree: ast.Module) -> cst.Module:
        used_after = used_names(new_tree)
        refs_after = dotted_refs(new_tree)
        drop = {n for n in (self.used_before - used_after) | self.remove_if_unused if n not in used_after}
        # an import is added when the fixed code reads the name it binds; "!" marks one
        # imported for its side effect (it registers something), always added
        # (flake8's F401 would call it unused: it carries `# noqa: F401`)
        to_add = [stmt[1:] + SIDE_EFFECT if stmt.startswith("!") else stmt
                  for mod, stmt in sorted(self.needed.items())
                  if stmt.startswith("!") or stmt.split(" as ")[-1].split()[-1].split(".")[0] in used_after]
        remover = _RemoveUnused(drop, self.remove_module_imports, refs_after, used_after,
                                keeps_xla=any("torch_xla" in s for s in to_add))
        # the isort sections the module's imports had before any went (a blank line parts a new one)
        sections = {key[0] for key in map(_sort_key, module.body) if key is not None}
        module = module.visit(remover)
        module, to_add = _merge_from_imports(module, to_add)
        if to_add:
            module = _insert_imports(module, to_add, sections)
        return module


#: the comment of an import added for its side effect (it registers the XLA backend)
SIDE_EFFECT = "  # noqa: F401"


def _is_xla(name: str) -> bool:
    return name == "torch_xla" or name.startswith("torch_xla.")


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _import_binds(node) -> set[str]:
    """The names the statement ``node`` binds as an import (``import a.b`` binds ``a``), or
    as ``name = importlib.import_module(...)``."""
    if type(node) is ast.Import:
        return {a.asname or a.name.split(".", 1)[0] for a in node.names}
    if type(node) is ast.ImportFrom:
        return {a.asname or a.name for a in node.names}
    bound = module_assignment(node)
    return {bound[0]} if bound is not None else set()


def _imports_xla(node) -> bool:
    """Does the statement import torch_xla (an import, or ``x = importlib.import_module(...)``)?"""
    if type(node) is ast.Import:
        return any(_is_xla(a.name) for a in node.names)
    if type(node) is ast.ImportFrom:
        return not node.level and node.module is not None and _is_xla(node.module)
    bound = module_assignment(node)
    return bound is not None and _is_xla(bound[1])


def comments_of(node: cst.CSTNode) -> list[cst.Comment]:
    """Every comment in ``node``, in source order."""
    found: list[cst.Comment] = []

    class _Find(cst.CSTVisitor):
        def visit_Comment(self, comment):
            found.append(comment)

    node.visit(_Find())
    return found


def noqa_text(stmt: cst.SimpleStatementLine) -> str:
    """The comments of the statement line itself (its trailing one, those inside its
    brackets; not the comment lines above it), joined as flake8 sees a logical line's."""
    leading = sum(line.comment is not None for line in stmt.leading_lines)
    return "  ".join(c.value for c in comments_of(stmt)[leading:])


def noqa_suppresses(stmt: cst.SimpleStatementLine, code: str) -> bool:
    """Does a ``# noqa`` of the statement line suppress ``code``, as flake8 decides (a bare
    ``# noqa``, or one whose codes are ``code`` or a prefix of it)?"""
    from flake8.violation import Violation

    text = noqa_text(stmt)
    return bool(text) and Violation(code, "", 1, 1, "", text).is_inline_ignored(False)


def has_noqa(stmt: cst.SimpleStatementLine) -> bool:
    """Does the statement line carry a ``# noqa`` comment (any codes)?"""
    from flake8.defaults import NOQA_INLINE_REGEXP

    return NOQA_INLINE_REGEXP.search(noqa_text(stmt)) is not None


def comment_line(comment: cst.Comment) -> cst.EmptyLine:
    """A line of its own, at the indentation of the statements around it, holding ``comment``."""
    return cst.EmptyLine(comment=comment)


def _lost_comments(original: cst.CSTNode, updated: cst.CSTNode) -> list[cst.Comment]:
    """The comments of ``original`` that ``updated`` no longer holds (fixes never add one:
    what is left is matched in order, by text)."""
    left = [c.value for c in comments_of(updated)]
    lost, i = [], 0
    for comment in comments_of(original):
        if i < len(left) and left[i] == comment.value:
            i += 1
        else:
            lost.append(comment)
    return lost


def _with_comments(lines: list) -> list:
    """``lines`` up to its last comment line ([] when none holds a comment)."""
    last = max((i for i, ln in enumerate(lines) if ln.comment is not None), default=-1)
    return list(lines[:last + 1])


class CarryLines(cst.CSTTransformer):
    """A transformer whose removed statement lines hand their comments (or their blank
    line) to the next statement of the same block, or, for the last one, to the lines after
    the block; the comments a removed or rewritten statement held (a trailing ``# why``, one
    inside its brackets) become lines of their own at its indentation: a fix never drops a
    comment."""

    def __init__(self):
        super().__init__()
        self.depth = 0
        self.carry: dict[int, list] = {}

    def visit_IndentedBlock(self, node):
        self.depth += 1
        return True

    def leave_IndentedBlock(self, original, updated):
        pending = _with_comments(self.carry.pop(self.depth, []))
        self.depth -= 1
        if pending and not updated.body:  # every statement went: the comments, then `pass`
            updated = updated.with_changes(body=[cst.SimpleStatementLine(body=[cst.Pass()], leading_lines=pending)])
        elif pending:  # the block's last statement went: its comments stay at the block's indentation
            updated = updated.with_changes(footer=[*pending, *updated.footer])
        return updated

    def leave_Module(self, original, updated):
        pending = _with_comments(self.carry.pop(0, []))
        if pending:
            updated = updated.with_changes(footer=[*pending, *updated.footer])
        return updated

    def leave_SimpleStatementLine(self, original, updated):
        if not updated.body:
            # its comment lines, then each comment of the statement itself on a line of its own
            leading = sum(line.comment is not None for line in original.leading_lines)
            own = [comment_line(c) for c in comments_of(original)[leading:]]
            self.carry.setdefault(self.depth, []).extend([*original.leading_lines, *own])
            return cst.RemovalSentinel.REMOVE
        lost = _lost_comments(original, updated)
        if lost:
            updated = updated.with_changes(leading_lines=[*updated.leading_lines, *map(comment_line, lost)])
        return updated

    def on_leave(self, original, updated):
        updated = super().on_leave(original, updated)
        if isinstance(updated, (cst.SimpleStatementLine, cst.BaseCompoundStatement)) and self.carry.get(self.depth):
            pending = self.carry.pop(self.depth)
            own = list(updated.leading_lines)
            if own:  # keep the removed line's comments, not its blank lines
                while pending and pending[-1].comment is None:
                    pending.pop()
                if not any(line.comment is not None for line in pending):
                    pending = []
            updated = updated.with_changes(leading_lines=pending + own)
        return updated


class _RemoveUnused(CarryLines):
    """Drops import aliases whose local name is in ``drop`` (and ``import a.b`` of a removed
    module nothing refers to any more), keeping at least one torch_xla import, and every
    import of a line whose ``# noqa`` suppresses F401 (unused import: the user keeps it on
    purpose, as a bare ``# noqa`` says too)."""

    def __init__(self, drop, modules, refs_after, used_after, keeps_xla):
        super().__init__()
        self.drop = drop
        self.modules = modules
        self.refs_after = refs_after
        self.used_after = used_after
        self.xla_left = keeps_xla
        self.guarded = 0
        self.kept_line = False  # the statement line being visited keeps its imports (# noqa)

    def visit_SimpleStatementLine(self, node):
        self.kept_line = any(isinstance(s, (cst.Import, cst.ImportFrom)) for s in node.body) \
            and noqa_suppresses(node, "F401")
        return True

    def leave_SimpleStatementLine(self, original, updated):
        self.kept_line = False
        return super().leave_SimpleStatementLine(original, updated)

    # an import under `try:` or `if` may be an availability probe (`try: import torch_xla
    # ... except ImportError: USE_XLA = False`): it stays, even unused
    def visit_Try(self, node):
        self.guarded += 1
        return True

    def leave_Try(self, original, updated):
        self.guarded -= 1
        return updated

    def visit_TryStar(self, node):
        self.guarded += 1
        return True

    def leave_TryStar(self, original, updated):
        self.guarded -= 1
        return updated

    def visit_If(self, node):
        self.guarded += 1
        return True

    def leave_If(self, original, updated):
        self.guarded -= 1
        return updated

    def _xla_guard(self, full: str) -> bool:
        """May an import of ``full`` go? Not when it is the module's last torch_xla import."""
        return not _is_xla(full) or self.xla_left

    def visit_Module(self, node):
        # count the torch_xla imports that stay, so the last one is never removed
        kept = 0
        for imp in _all_imports(node):
            for full, local, dotted_plain in imp:
                if _is_xla(full) and not self._goes(full, local, dotted_plain):
                    kept += 1
        self.xla_left = self.xla_left or kept > 0
        return True

    def _goes(self, full, local, dotted_plain) -> bool:
        if dotted_plain:
            if "." not in full and full in self.drop:
                return True  # `import os` whose last use a fix removed (the MASTER_ADDR lines)
            return full in self.modules and not any(r == full or r.startswith(full + ".") for r in self.refs_after)
        return local in self.drop

    def leave_Import(self, original, updated):
        if self.guarded or self.kept_line:
            return updated
        names = []
        for alias in updated.names:
            full = dotted(alias.name)
            local = alias.asname.name.value if alias.asname else None
            plain = alias.asname is None
            if self._goes(full, local, plain) and self._xla_guard(full):
                root = full.split(".", 1)[0]
                if plain and root in self.used_after and not self._root_bound_elsewhere(root, original):
                    names.append(alias.with_changes(name=cst.Name(root)))  # keep the root bound
                continue
            names.append(alias)
        return _with_aliases(updated, names)

    def _root_bound_elsewhere(self, root, original) -> bool:
        return False  # conservative: keep `import root` whenever the root is still read

    def leave_ImportFrom(self, original, updated):
        if isinstance(updated.names, cst.ImportStar) or self.guarded or self.kept_line:
            return updated
        module = dotted(updated.module) if updated.module is not None else ""
        names = []
        for alias in updated.names:
            local = alias.asname.name.value if alias.asname else alias.name.value
            full = f"{module}.{alias.name.value}" if module else alias.name.value
            if local in self.drop and not updated.relative and self._xla_guard(full if _is_xla(module) else module):
                continue
            names.append(alias)
        return _with_aliases(updated, names)


def _all_imports(module: cst.Module):
    """Per import statement: [(full name, local name, plain dotted import?)]."""
    out = []

    class _V(cst.CSTVisitor):
        def visit_Import(self, node):
            out.append([(dotted(a.name), a.asname.name.value if a.asname else None, a.asname is None)
                        for a in node.names])

        def visit_ImportFrom(self, node):
            if isinstance(node.names, cst.ImportStar) or node.relative:
                return
            mod = dotted(node.module) if node.module is not None else ""
            out.append([(mod, a.asname.name.value if a.asname else a.name.value, False) for a in node.names])

    module.visit(_V())
    return out


def _with_aliases(stmt, names):
    if len(names) == len(stmt.names):
        return stmt
    if not names:
        return cst.RemovalSentinel.REMOVE
    if names[-1] is not stmt.names[-1]:  # the new last one takes the old last one's comma (or none)
        names[-1] = names[-1].with_changes(comma=stmt.names[-1].comma)
    return stmt.with_changes(names=names)


def _is_import_line(stmt) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and all(
        isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body)


def _line_modules(stmt):
    for s in stmt.body:
        if isinstance(s, cst.Import):
            yield from (dotted(a.name) for a in s.names)
        elif isinstance(s, cst.ImportFrom) and s.module is not None:
            yield dotted(s.module)


def _merge_from_imports(module: cst.Module, statements: list[str]) -> tuple[cst.Module, list[str]]:
    """``from m import n`` joins the module's own top-level ``from m import a, b`` line
    (``from m import a, b, n``); the statements left to insert are returned."""
    body = list(module.body)
    left = []
    for text in statements:
        parts = text.split()
        if len(parts) != 4 or parts[0] != "from" or parts[2] != "import":
            left.append(text)
            continue
        merged = False
        for i, stmt in enumerate(body):
            if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
                break  # (the statement is then inserted: a for-else here lost it)
            if not _is_import_line(stmt) or len(stmt.body) != 1 or has_noqa(stmt):
                continue  # (a name joining a `# noqa` line would fall under its noqa)
            imp = stmt.body[0]
            if isinstance(imp, cst.ImportFrom) and not imp.relative and imp.module is not None \
                    and dotted(imp.module) == parts[1] and not isinstance(imp.names, cst.ImportStar) \
                    and imp.rpar is None:
                names = list(imp.names)
                names[-1] = names[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
                names.append(cst.ImportAlias(name=cst.Name(parts[3])))
                body[i] = stmt.with_changes(body=[imp.with_changes(names=names)])
                merged = True
                break
        if not merged:
            left.append(text)
    return module.with_changes(body=body), left


def _sort_key(stmt) -> tuple | None:
    """Where isort (its default profile) orders an import line: (section: 0 the standard
    library, 1 the others; 0 ``import m`` before 1 ``from m import n``; the module, case
    folded); None for a line that is not one plain import or is a ``__future__`` one."""
    if not _is_import_line(stmt) or len(stmt.body) != 1:
        return None
    imp = stmt.body[0]
    if isinstance(imp, cst.Import):
        kind, module = 0, dotted(imp.names[0].name)
    elif not imp.relative and imp.module is not None:
        kind, module = 1, dotted(imp.module)
    else:
        return None
    if not module or module == "__future__":
        return None
    section = 0 if module.split(".")[0] in sys.stdlib_module_names else 1
    return section, kind, module.lower()


def _insert_imports(module: cst.Module, statements: list[str], sections: frozenset = frozenset()) -> cst.Module:
    """Insert each import where isort puts it in the module's leading imports (those before
    its first ``def`` / ``class``): before the first import line of its section that sorts
    after it (``import m`` lines before ``from`` lines, by module), else after the last
    one of its section; a section with no import yet: after the last leading import (the
    last torch_xla one, when they are not sorted), parted from a standard library line by a
    blank line when the module had no import of that section (``sections``); none at all: after the docstring and ``__future__`` imports."""
    body = list(module.body)
    for text in statements:
        new = cst.parse_statement(text + "\n")
        key = _sort_key(new)
        last_import = last_xla = None
        start = 0
        same = []  # (index, its key) of the leading import lines of the new one's section
        for i, stmt in enumerate(body):
            if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
                break
            if i == start and isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 \
                    and isinstance(stmt.body[0], cst.Expr) \
                    and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString)):
                start = i + 1  # the docstring
                continue
            if _is_import_line(stmt):
                last_import = i
                if any(_is_xla(m) for m in _line_modules(stmt)):
                    last_xla = i
                elif any(m == "__future__" for m in _line_modules(stmt)):
                    start = i + 1
                k = _sort_key(stmt)
                if k is not None and key is not None and k[0] == key[0]:
                    same.append((i, k))
        keys = [k for _, k in same]
        if same and keys == sorted(keys):  # a sorted section: the new line where isort puts it
            later = [i for i, k in same if k > key]
            if later:
                at = later[0]
                if at == same[0][0] and not any(ln.comment is not None for ln in body[at].leading_lines):
                    # the section's first line: the new one takes the blank lines above it
                    new = new.with_changes(leading_lines=body[at].leading_lines)
                    body[at] = body[at].with_changes(leading_lines=())
            else:
                at = same[-1][0] + 1
        else:
            where = last_xla if last_xla is not None else last_import
            at = where + 1 if where is not None else start
            before = _sort_key(body[where]) if where is not None else None
            if not same and key is not None and key[0] not in sections and before is not None \
                    and before[0] < key[0]:
                new = new.with_changes(leading_lines=[cst.EmptyLine()])  # a new section, as isort parts them
        body[at:at] = [new]
    return module.with_changes(body=body)
