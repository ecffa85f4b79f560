"""The fixer: lint, map each finding to its LibCST node, apply the fixes in one pass, manage
the imports, then re-parse and re-lint the result and keep it only when it verifies.

Verification (per file): the output compiles, and no code is reported more often than
before minus the findings fixed: a fixed finding that is still reported, or any new
finding, reverts the whole file (with a message naming the codes).
"""

from __future__ import annotations

import argparse
import ast
import collections
import dataclasses
import warnings
from typing import Callable

import libcst as cst
from libcst.metadata import MetadataWrapper, ParentNodeProvider, PositionProvider

from ..engine import run
from ..registry import Finding, all_rules
from ..settings import Settings
from . import NONE, SAFE, UNSAFE
from .imports import CarryLines, Imports

#: the order fixes on one node are applied in: by code (a deprecation inside a call that
#: another rule rewrites is fixed first, since the inner node is left first anyway)
ORDER = sorted


@dataclasses.dataclass
class FixResult:
    source: str  # the fixed text (the input when nothing was fixed or the fix was reverted)
    fixed: int  # findings that are gone
    remaining: int  # findings still reported
    reverted: str | None = None  # why the fixes were not kept
    findings: list = dataclasses.field(default_factory=list)  # what remains


class _Options(argparse.Namespace):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return None


def lint(source: str, settings: Settings, path: str = "<fix>",
         is_selected: Callable[[str], bool] = lambda code: True) -> list[Finding] | None:
    """The selected findings flake8's ``# noqa`` leaves, or None when the text does not parse."""
    from flake8.processor import FileProcessor
    from flake8.violation import Violation

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    options = _Options(hang_closing=False, indent_size=4, max_line_length=79, max_doc_length=None,
                       disable_noqa=False, verbose=0)
    processor = FileProcessor(path, options, lines=source.splitlines(keepends=True))
    if processor.should_ignore_file():
        return []
    out = []
    for f in run(tree, settings, source):
        if not is_selected(f.code):
            continue
        logical = processor.noqa_line_for(f.line)
        if logical is not None and Violation(f.code, path, f.line, f.col + 1, f.message, logical).is_inline_ignored(False):
            continue
        out.append(f)
    return out


def undefined_names(source: str) -> set[str]:
    """The names pyflakes (flake8's own checker) reports as undefined."""
    from pyflakes import checker, messages

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            found = checker.Checker(ast.parse(source)).messages
    except (RecursionError, MemoryError, SyntaxError, ValueError):
        return set()
    return {m.message_args[0] for m in found if isinstance(m, messages.UndefinedName)}


class Context:
    """What a fix sees: the module, positions and parents of its nodes, the settings, the
    imports; and where the fixes put their edits."""

    def __init__(self, wrapper: MetadataWrapper, tree: ast.Module, source: str, settings: Settings):
        self.module = wrapper.module
        self.tree = tree
        self.settings = settings
        self.positions = wrapper.resolve(PositionProvider)
        self.parents = wrapper.resolve(ParentNodeProvider)
        self.imports = Imports(tree)
        self.lines = source.splitlines(keepends=True)
        self.edits: dict[int, list] = {}  # id(original node) -> [(order key, dedup key, fn)]
        self._by_range: dict | None = None

    # -- finding -> node -----------------------------------------------------------------

    def _char_col(self, line: int, col: int) -> int:
        """ast columns count UTF-8 bytes, LibCST's count characters."""
        if not 1 <= line <= len(self.lines):
            return col
        return len(self.lines[line - 1].encode("utf-8")[:col].decode("utf-8", errors="replace"))

    def node_at(self, finding: Finding):
        """The node the finding is reported on: same start and end (an import alias first,
        else the outermost expression)."""
        if self._by_range is None:
            self._by_range = {}
            for node, r in self.positions.items():
                key = (r.start.line, r.start.column, r.end.line, r.end.column)
                self._by_range.setdefault(key, []).append(node)
        if finding.end is None:
            return None
        key = (finding.line, self._char_col(finding.line, finding.col),
               finding.end[0], self._char_col(finding.end[0], finding.end[1]))
        nodes = self._by_range.get(key, [])
        for node in nodes:
            if isinstance(node, cst.ImportAlias):
                return node
        exprs = [n for n in nodes if isinstance(n, cst.BaseExpression)]
        if not exprs:
            return None
        # the outermost: the one no other candidate contains
        for node in exprs:
            if not any(self.parents.get(node) is other for other in exprs):
                return node
        return exprs[0]

    def parent(self, node):
        return self.parents.get(node)

    def names(self, value: str):
        """Every ``Name`` node reading ``value`` (outside imports, not an attribute's name)."""
        out = []
        for node in self.positions:
            if isinstance(node, cst.Name) and node.value == value:
                parent = self.parents.get(node)
                if isinstance(parent, (cst.ImportAlias, cst.AsName)) or \
                        (isinstance(parent, cst.Attribute) and parent.attr is node) or \
                        (isinstance(parent, cst.Arg) and parent.keyword is node):
                    continue
                out.append(node)
        return out


class Builder:
    """One finding's fix: its edits and the imports it needs, applied only when allowed."""

    def __init__(self, ctx: Context, finding: Finding, applicability: str = SAFE):
        self.ctx = ctx
        self.finding = finding
        self.applicability = applicability
        self.edits: list = []
        self.needs: list = []
        self.remove_if_unused: list[str] = []
        self.remove_modules: list[str] = []
        self.node = None  # the finding's node

    def ref(self, module: str, attr: str | None = None) -> str | None:
        """How to spell ``module.attr`` here (importing the module when needed); None when no
        spelling is safe."""
        deferred = False
        node = self.node
        while node is not None and not isinstance(node, cst.Module):
            if isinstance(node, (cst.FunctionDef, cst.Lambda)):
                deferred = True  # runs when called, after every module-level import
                break
            node = self.ctx.parents.get(node)
        spelled = self.ctx.imports.spell(module, self.finding.line, deferred)
        if spelled is None:
            return None
        name, statement = spelled
        self.needs.append((module, statement))
        return f"{name}.{attr}" if attr else name

    def device(self) -> str | None:
        """The XLA device of this process, as the target release spells it."""
        if self.ctx.settings.target_version >= (2, 3):
            fn = self.ref("torch_xla", "device")
        else:
            fn = self.ref("torch_xla.core.xla_model", "xla_device")
        return f"{fn}()" if fn else None

    def edit(self, node, fn, key: str = "") -> "Builder":
        """Apply ``fn(updated_node) -> new node`` to ``node`` (a dedup ``key`` makes two
        findings' identical edits one)."""
        self.edits.append((node, key, fn))
        return self


def _apply(module: cst.Module, edits: dict[int, list]) -> cst.Module:
    class _Apply(CarryLines):
        def on_leave(self, original, updated):
            updated = super().on_leave(original, updated)
            for _, _, fn in sorted(edits.get(id(original), ()), key=lambda e: e[0]):
                if isinstance(updated, cst.RemovalSentinel):
                    break
                updated = fn(updated)
            return updated

    return module.visit(_Apply())


def fix_source(source: str, settings: Settings, path: str = "<fix>", unsafe: bool = False,
               is_selected: Callable[[str], bool] = lambda code: True) -> FixResult:
    """Fix one module's text. Never raises on odd input: a text LibCST cannot parse, or a
    fix that fails, leaves the text as it is."""
    from .rules import FIXES

    before = lint(source, settings, path, is_selected)
    if before is None:
        return FixResult(source, 0, 0)
    rules = all_rules()
    allowed = (SAFE, UNSAFE) if unsafe else (SAFE,)
    todo = [f for f in before if f.code in FIXES and getattr(rules.get(f.code), "fix_applicability", NONE) != NONE]
    if not todo:
        return FixResult(source, 0, len(before), findings=before)
    try:
        wrapper = MetadataWrapper(cst.parse_module(source))
        ctx = Context(wrapper, ast.parse(source), source, settings)
    except Exception:  # LibCST cannot parse what ast can (rare new syntax): leave it
        return FixResult(source, 0, len(before), findings=before)
    planned = collections.Counter()
    seen_keys = set()
    for n, finding in enumerate(sorted(todo, key=lambda f: (f.code, f.line, f.col))):
        builder = Builder(ctx, finding)
        try:
            node = builder.node = ctx.node_at(finding)
            ok = node is not None and FIXES[finding.code](builder, node)
        except Exception:  # a fix that cannot handle this shape: the finding stays
            ok = False
        if not ok or builder.applicability not in allowed:
            continue
        planned[finding.code] += 1
        for module_name, statement in builder.needs:
            ctx.imports.need(module_name, statement)
        ctx.imports.remove_if_unused.update(builder.remove_if_unused)
        ctx.imports.remove_module_imports.update(builder.remove_modules)
        for target, key, fn in builder.edits:
            if key and (id(target), key) in seen_keys:
                continue
            seen_keys.add((id(target), key))
            ctx.edits.setdefault(id(target), []).append(((finding.code, n), key, fn))
    if not planned:
        return FixResult(source, 0, len(before), findings=before)
    try:
        new_module = _apply(ctx.module, ctx.edits)
        new_tree = ast.parse(new_module.code)
        new_module = ctx.imports.finish(new_module, new_tree)
        new_source = new_module.code
        compile(new_source, path, "exec", dont_inherit=True)
    except Exception as exc:
        return FixResult(source, 0, len(before), f"the fixed text does not compile ({type(exc).__name__})", before)
    undefined = sorted(undefined_names(new_source) - undefined_names(source))
    if undefined:  # an import placed after a use that runs at import time, a shadowed name...
        return FixResult(source, 0, len(before), "undefined after the fixes: " + ", ".join(undefined), before)
    after = lint(new_source, settings, path, is_selected)
    if after is None:
        return FixResult(source, 0, len(before), "the fixed text does not parse", before)
    was, now = collections.Counter(f.code for f in before), collections.Counter(f.code for f in after)
    bad = sorted(code for code in now if now[code] > was[code] - planned[code])
    if bad:
        still = [c for c in bad if planned[c]]
        new = [c for c in bad if not planned[c]]
        why = "; ".join(filter(None, [still and "still reported after its fix: " + ", ".join(still),
                                      new and "new finding after the fixes: " + ", ".join(new)]))
        return FixResult(source, 0, len(before), why, before)
    return FixResult(new_source, len(before) - len(after), len(after), findings=after)
