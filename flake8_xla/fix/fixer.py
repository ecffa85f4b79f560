"""The fixer: lint, map each finding to its LibCST node, apply the fixes in one pass, manage
the imports, then re-parse and re-lint the result and keep it only when it verifies.

Verification: the output compiles, names nothing pyflakes finds undefined, and no code is
reported more often than before minus the findings fixed. A fixed finding that is still
reported, or any new finding, rolls back the fix that caused it, not the whole file: the
largest set of the file's fixes that verifies together is kept (``_verified``), and
``FixResult.reverted`` names the fixes left out and why.
"""

from __future__ import annotations

import argparse
import ast
import bisect
import collections
import dataclasses
import difflib
import gc
import re
import warnings
from typing import Callable

import libcst as cst
from libcst.metadata import MetadataWrapper, ParentNodeProvider, PositionProvider

from ..engine import run
from ..lines import split_lines, universal_lines
from ..registry import Finding, all_rules
from ..settings import Settings
from . import NONE, SAFE, UNSAFE
from .imports import CarryLines, Imports
from .limits import TOO_DEEP, on_big_stack, too_deep

#: the order fixes on one node are applied in: by code (a deprecation inside a call that
#: another rule rewrites is fixed first, since the inner node is left first anyway)
ORDER = sorted


@dataclasses.dataclass
class FixResult:
    source: str  # the fixed text (the input when nothing was fixed or the fix was reverted)
    fixed: int  # findings that are gone
    remaining: int  # findings still reported
    reverted: str | None = None  # why some or all fixes were not kept (``source`` holds the kept ones)
    findings: list = dataclasses.field(default_factory=list)  # what remains
    #: the lines of the input the kept fixes edit, as (first, last) line spans: each edited
    #: node's, the line of the statement a new one goes before or after, a moved statement's
    #: and the line it goes after; imports added or removed are not listed
    touched: tuple = ()
    #: the findings fixed, by code (``{"XLA101": 2}``), for ``--show-fixes``
    fixed_codes: dict = dataclasses.field(default_factory=dict)
    #: why the module was not handed to LibCST at all (:func:`flake8_xla.fix.limits.too_deep`):
    #: the CLI says ``path: not fixed: ...``, the server offers no fix
    refused: str | None = None


class _Options(argparse.Namespace):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return None


def lint(source: str, settings: Settings, path: str = "<fix>",
         is_selected: Callable[[str], bool] = lambda code: True, filename: str | None = None) -> list[Finding] | None:
    """The selected findings flake8's ``# noqa`` leaves, or None when the text does not parse.
    ``filename``: the file the text is (or will be) in, for project mode (None: the text alone)."""
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
    # the lines as flake8 reads the file: line numbers as Python counts them, \n line ends
    processor = FileProcessor(path, options, lines=universal_lines(source))
    if processor.should_ignore_file():
        return []
    out = []
    for f in run(tree, settings, source, filename=filename):
        if not is_selected(f.code):
            continue
        logical = processor.noqa_line_for(f.line)
        if logical is not None and Violation(f.code, path, f.line, f.col + 1, f.message, logical).is_inline_ignored(False):
            continue
        out.append(f)
    return out


def noqa_check(source: str, path: str = "<fix>") -> Callable[[int, str], bool]:
    """``suppressed(line, code)``: does flake8's ``# noqa`` suppress ``code`` on ``line`` of
    ``source`` (the line's own comment, or that of the logical line it belongs to, as flake8
    maps them)? Never raises: a text flake8 cannot tokenize suppresses nothing."""
    from flake8.processor import FileProcessor
    from flake8.violation import Violation

    options = _Options(hang_closing=False, indent_size=4, max_line_length=79, max_doc_length=None,
                       disable_noqa=False, verbose=0)
    try:
        processor = FileProcessor(path, options, lines=universal_lines(source))
    except Exception:
        return lambda line, code: False

    def suppressed(line: int, code: str) -> bool:
        try:
            logical = processor.noqa_line_for(line)
        except Exception:
            return False
        return logical is not None and Violation(code, path, line, 1, "", logical).is_inline_ignored(False)
    return suppressed


def rewritten_lines(ctx: "Context", builder: "Builder") -> set[int]:
    """The lines of the input a finding's fix would rewrite: per edit, the lines of its node
    whose text changes (the edit applied to the original node, the two texts compared line
    by line; every line of a node it removes or cannot be applied alone), and every line of
    a statement it moves. Inserted statements rewrite no line."""
    out: set[int] = set()
    for node, _, fn in builder.edits:
        r = ctx.positions.get(node)
        if r is None:
            continue
        try:
            new = fn(node)
            before = split_lines(ctx.module.code_for_node(node))
            after = split_lines(ctx.module.code_for_node(new)) if isinstance(new, cst.CSTNode) else None
        except Exception:
            after = None
        if after is None:
            out.update(range(r.start.line, r.end.line + 1))
            continue
        for tag, i1, i2, _, _ in difflib.SequenceMatcher(None, before, after, autojunk=False).get_opcodes():
            if tag != "equal":
                out.update(range(r.start.line + i1, r.start.line + max(i2, i1 + 1)))
    for kind, stmt, *_ in builder.statement_edits:
        r = ctx.positions.get(stmt) if kind == "move" else None
        if r is not None:
            out.update(range(r.start.line, r.end.line + 1))
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
        self.lines = split_lines(source)
        self.edits: dict[int, list] = {}  # id(original node) -> [(order key, dedup key, fn)]
        #: id(original statement) -> {"before": [...], "after": [...]} of (order key, dedup key, make)
        self.inserts: dict[int, dict] = {}
        self.moves: dict[int, int] = {}  # id(statement to move) -> id(statement it goes after)
        self._by_range: dict | None = None
        self._ast_by_range: dict | None = None
        self._model = None
        # indexes built on first use, so that each finding's fix costs no walk of the module
        self._names: dict | None = None
        self._call_starts: dict = {}
        self._for_at: dict | None = None
        self._loop_at: dict | None = None
        self._blocks: dict = {}  # id(block body) -> (its statements, id(statement) -> index)
        self._holders: dict = {}
        self._memo: dict = {}

    @property
    def model(self):
        """The semantic model of the original text (built on first use, for the fixes that
        ask it a question: the device variable in scope)."""
        if self._model is None:
            from ..model import Model

            self._model = Model(self.tree, self.settings)
        return self._model

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
        if not exprs:  # a statement (an assignment, a loop header): the small statement first
            stmts = [n for n in nodes if isinstance(n, cst.BaseSmallStatement)] or \
                [n for n in nodes if isinstance(n, cst.BaseCompoundStatement)]
            return stmts[0] if stmts else None
        # the outermost: the one no other candidate contains
        for node in exprs:
            if not any(self.parents.get(node) is other for other in exprs):
                return node
        return exprs[0]

    def parent(self, node):
        return self.parents.get(node)

    def statement_of(self, node):
        """The statement line (``SimpleStatementLine``) or compound statement that holds
        ``node`` directly in a block (not inside a lambda or comprehension, whose code runs
        elsewhere); None when there is none."""
        while node is not None and not isinstance(node, cst.Module):
            if isinstance(node, (cst.Lambda, cst.BaseComp, cst.FunctionDef, cst.ClassDef)):
                return None
            if isinstance(node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                return node
            node = self.parents.get(node)
        return None

    def block_of(self, stmt):
        """The body list that holds the statement ``stmt`` (a block's or the module's)."""
        return self.siblings(stmt)[0]

    def siblings(self, stmt):
        """(the statements of the block that holds ``stmt``, as a list; its index there), or
        (None, None). Each block is indexed once."""
        parent = self.parents.get(stmt)
        body = getattr(parent, "body", None)
        if not isinstance(body, (list, tuple)):
            return None, None
        index = self._blocks.get(id(body))
        if index is None:
            index = self._blocks[id(body)] = (list(body), {id(s): i for i, s in enumerate(body)})
        at = index[1].get(id(stmt))
        return (index[0], at) if at is not None else (None, None)

    def nearest_sibling(self, stmt, lines: frozenset, after: bool):
        """The nearest statement after (``after``) or before ``stmt`` in its block whose
        line span holds one of ``lines``, or None. One pass per block and ``lines``."""
        body, at = self.siblings(stmt)
        if body is None:
            return None
        key = (id(body), lines)
        holders = self._holders.get(key)
        if holders is None:
            sorted_lines = sorted(lines)
            holders = []
            for i, s in enumerate(body):
                r = self.positions.get(s)
                if r is not None:
                    k = bisect.bisect_left(sorted_lines, r.start.line)
                    if k < len(sorted_lines) and sorted_lines[k] <= r.end.line:
                        holders.append(i)
            self._holders[key] = holders
        k = bisect.bisect_right(holders, at)
        if after:
            return body[holders[k]] if k < len(holders) else None
        k = bisect.bisect_left(holders, at)
        return body[holders[k - 1]] if k > 0 else None

    def memo(self, key, make):
        """``make()``, computed once per fixed file for ``key``."""
        if key not in self._memo:
            self._memo[key] = make()
        return self._memo[key]

    def position(self, node):
        return self.positions.get(node)

    def cst_of(self, node: ast.AST):
        """The outermost LibCST expression with the same range as the ``ast`` expression
        ``node``, or None."""
        if getattr(node, "end_lineno", None) is None:
            return None
        import types

        return self.node_at(types.SimpleNamespace(line=node.lineno, col=node.col_offset,
                                                  end=(node.end_lineno, node.end_col_offset)))

    def ast_node(self, node, kind=ast.expr):
        """The ``ast`` node of type ``kind`` with the same range as the LibCST ``node`` (to
        ask the semantic model about it), or None."""
        if self._ast_by_range is None:
            self._ast_by_range = {}
            for n in ast.walk(self.tree):
                if isinstance(n, (ast.expr, ast.stmt)) and getattr(n, "end_lineno", None) is not None:
                    key = (n.lineno, self._char_col(n.lineno, n.col_offset),
                           n.end_lineno, self._char_col(n.end_lineno, n.end_col_offset))
                    self._ast_by_range.setdefault(key, []).append(n)
        r = self.positions.get(node)
        if r is None:
            return None
        found = self._ast_by_range.get((r.start.line, r.start.column, r.end.line, r.end.column), ())
        return next((n for n in found if isinstance(n, kind)), None)

    def names(self, value: str):
        """Every ``Name`` node reading ``value`` (outside imports, not an attribute's name),
        in source order."""
        if self._names is None:
            self._names = {}
            for node in self.positions:
                if isinstance(node, cst.Name):
                    parent = self.parents.get(node)
                    if isinstance(parent, (cst.ImportAlias, cst.AsName)) or \
                            (isinstance(parent, cst.Attribute) and parent.attr is node) or \
                            (isinstance(parent, cst.Arg) and parent.keyword is node):
                        continue
                    self._names.setdefault(node.value, []).append(node)
        return list(self._names.get(value, ()))

    def call_starts(self, names: frozenset) -> list:
        """The sorted (line, column) starts of the calls of a function or method named in
        ``names`` (``f(...)``, ``x.f(...)``), for :func:`bisect` questions."""
        if names not in self._call_starts:
            starts = []
            for node, r in self.positions.items():
                if isinstance(node, cst.Call):
                    func = node.func
                    name = func.attr.value if isinstance(func, cst.Attribute) else \
                        func.value if isinstance(func, cst.Name) else ""
                    if name in names:
                        starts.append((r.start.line, r.start.column))
            self._call_starts[names] = sorted(starts)
        return self._call_starts[names]

    def for_at(self, line: int):
        """The first ``for`` statement (LibCST) that starts on ``line``, or None."""
        if self._for_at is None:
            self._for_at = {}
            for node, r in self.positions.items():
                if isinstance(node, cst.For):
                    self._for_at.setdefault(r.start.line, node)
        return self._for_at.get(line)

    def self_device_at(self, line: int) -> str | None:
        """``self.X`` when ``line`` is in a method (its first parameter ``self``) of a class
        that assigns ``self.X`` only this process's XLA device (``torch_xla.device()``,
        ``xm.xla_device()``, ``torch.device("xla")``), every assignment in another method
        or before ``line``; else None."""
        return self.memo(("self device", line), lambda: self._self_device_at(line))

    def _self_device_at(self, line: int) -> str | None:
        methods = self.memo("methods", lambda: sorted(
            ((item.lineno, id(item)), item, node) for node in ast.walk(self.tree) if isinstance(node, ast.ClassDef)
            for item in node.body if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))))
        method = cls = None
        k = bisect.bisect_right(methods, ((line, 1 << 62),))
        while k:  # the innermost method around the line: the nearest one before it that holds it
            k -= 1
            _, item, node = methods[k]
            if item.lineno <= line <= item.end_lineno:
                method, cls = item, node
                break
        if method is None or not method.args.args or method.args.args[0].arg != "self":
            return None
        assigned = self.memo(("self devices", id(cls)), lambda: self._self_assignments(cls))
        names = sorted(attr for attr, seen in assigned.items()
                       if all(ok and (where is not method or at < line) for where, at, ok in seen))
        return f"self.{names[0]}" if len(names) == 1 else ("self.device" if "device" in names else None)

    def _self_assignments(self, cls) -> dict:
        """attribute -> [(the method, line, assigned only the XLA device?)] of each
        ``self.X = ...`` in the methods of ``cls`` (an unpacking or augmented one: not)."""
        found: dict[str, list] = {}
        for item in cls.body:
            if not isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(item):
                targets = node.targets if isinstance(node, ast.Assign) else \
                    [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else ()
                for t in targets:
                    if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                        ok = isinstance(node, ast.Assign) and len(node.targets) == 1 and self._device_value(node.value)
                        found.setdefault(t.attr, []).append((item, node.lineno, ok))
                    elif not isinstance(t, ast.Name):  # self.a, self.b = ...: not followed
                        for sub in ast.walk(t):
                            if isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name) \
                                    and sub.value.id == "self":
                                found.setdefault(sub.attr, []).append((item, node.lineno, False))
        return found

    def _device_value(self, value) -> bool:
        if not isinstance(value, ast.Call):
            return False
        model = self.model
        ctx = model.call_ctx(value)
        return ctx is not None and model._device_value(value, ctx)

    def loop_at(self, line: int):
        """The semantic model's first ``for`` loop whose statement starts on ``line``, or None."""
        if self._loop_at is None:
            self._loop_at = {}
            for lp in self.model.loops:
                if type(lp.node).__name__ == "For":
                    self._loop_at.setdefault(lp.node.lineno, lp)
        return self._loop_at.get(line)


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
        self.statement_edits: list = []
        self.node = None  # the finding's node

    def ref(self, module: str, attr: str | None = None) -> str | None:
        """How to spell ``module.attr`` here (importing the module when needed); None when no
        spelling is safe."""
        # code in a function runs when called, after every module-level import
        spelled = self.ctx.imports.spell(module, self.finding.line, self._deferred())
        if spelled is None:
            return self._ref_beside(module, attr)
        name, statement = spelled
        self.needs.append((module, statement))
        return f"{name}.{attr}" if attr else name

    def _ref_beside(self, module: str, attr: str | None) -> str | None:
        """``module.attr`` where torch_xla is imported only under a guard or in a function:
        the module imported right after the guarded import of the name the finding's node
        reads (``xm`` of ``xm.xla_device()``), in its block (:meth:`Imports.spell_beside`);
        None when that is not safe."""
        node = self.node.func if isinstance(self.node, cst.Call) else self.node
        while isinstance(node, cst.Attribute):
            node = node.value
        if not isinstance(node, cst.Name):
            return None
        found = self.ctx.imports.spell_beside(module, node.value, self.finding.line, self.ctx.tree)
        if found is None:
            return None
        spelled, statement, line = found
        anchor = next((n for n, r in self.ctx.positions.items()
                       if isinstance(n, cst.SimpleStatementLine) and r.start.line == line), None)
        if anchor is None:
            return None
        self.insert(anchor, "after", lambda: statement, f"import beside: {statement}")
        return f"{spelled}.{attr}" if attr else spelled

    def device(self) -> str | None:
        """The XLA device of this process, as the target release spells it."""
        if self.ctx.settings.target_version >= (2, 3):
            fn = self.ref("torch_xla", "device")
        else:
            fn = self.ref("torch_xla.core.xla_model", "xla_device")
        return f"{fn}()" if fn else None

    def ref_name(self, modules: tuple[str, ...], name: str) -> str | None:
        """How to spell the class or function ``name`` that ``modules`` export (the first
        is where it is defined): a name the module already imports from one of them, else
        ``name`` with a ``from <first> import name`` to add; None when ``name`` is bound to
        something else."""
        deferred = self._deferred()
        for module in modules:
            spelled = self.ctx.imports.spell_from(module, name, self.finding.line, deferred, add=False)
            if spelled is not None:
                return spelled[0]
        spelled = self.ctx.imports.spell_from(modules[0], name, self.finding.line, deferred)
        if spelled is None:
            return None
        local, statement = spelled
        self.needs.append((f"{modules[0]}.{name}", statement))
        return local

    def _deferred(self) -> bool:
        node = self.node
        while node is not None and not isinstance(node, cst.Module):
            if isinstance(node, (cst.FunctionDef, cst.Lambda)):
                return True
            node = self.ctx.parents.get(node)
        return False

    def device_at(self, line: int) -> str | None:
        """The device variable bound to the XLA device before ``line`` in the function
        around it (``device = torch_xla.device()``), else, in a method, the attribute of
        ``self`` its class binds only to the XLA device (``self.device``), else the XLA
        device call."""
        model = self.ctx.model
        name = model.device_name_at(model.ctx_at_line(line), line)
        if name is None:
            name = self.ctx.self_device_at(line)
        return name if name is not None else self.device()

    def edit(self, node, fn, key: str = "") -> "Builder":
        """Apply ``fn(updated_node) -> new node`` to ``node`` (a dedup ``key`` makes two
        findings' identical edits one)."""
        self.edits.append((node, key, fn))
        return self

    def insert(self, stmt, where: str, make, key: str = "") -> "Builder":
        """Put the statement ``make()`` returns (a ``SimpleStatementLine``; or source text)
        ``where`` = ``"before"`` or ``"after"`` the statement ``stmt`` of a block."""
        self.statement_edits.append(("insert", stmt, where, make, key))
        return self

    def move_after(self, stmt, anchor) -> "Builder":
        """Move the statement ``stmt`` (as the other fixes leave it) to just after ``anchor``,
        a later statement of the same block."""
        self.statement_edits.append(("move", stmt, anchor, None, ""))
        return self


def _statement(make):
    out = make() if callable(make) else make
    if isinstance(out, str):
        out = cst.parse_statement(out if out.endswith("\n") else out + "\n")
    return out


def _apply(module: cst.Module, edits: dict[int, list], inserts: dict | None = None,
           moves: dict | None = None) -> cst.Module:
    inserts = inserts or {}
    moves = moves or {}

    class _Apply(CarryLines):
        def __init__(self):
            super().__init__()
            self.moved: dict[int, list] = {}  # id(anchor) -> statements to put after it

        def on_leave(self, original, updated):
            updated = super().on_leave(original, updated)
            for _, _, fn in sorted(edits.get(id(original), ()), key=lambda e: e[0]):
                if isinstance(updated, cst.RemovalSentinel):
                    break
                updated = fn(updated)
            if not isinstance(original, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                return updated
            plan = inserts.get(id(original), {})
            after_moved = self.moved.pop(id(original), [])
            if id(original) in moves and not isinstance(updated, cst.RemovalSentinel):
                # the statement goes after its anchor: its comments go with it, its blank
                # lines stay where it was
                lines = list(updated.leading_lines)
                self.carry.setdefault(self.depth, []).extend(ln for ln in lines if ln.comment is None)
                kept = [ln for ln in lines if ln.comment is not None]
                self.moved.setdefault(moves[id(original)], []).append(updated.with_changes(leading_lines=kept))
                return cst.RemovalSentinel.REMOVE
            before = [_statement(m) for _, _, m in sorted(plan.get("before", ()), key=lambda e: e[0])]
            after = [_statement(m) for _, _, m in sorted(plan.get("after", ()), key=lambda e: e[0])] + after_moved
            if not before and not after:
                return updated
            if isinstance(updated, cst.RemovalSentinel):
                return cst.FlattenSentinel(before + after) if before or after else updated
            if before:  # the blank lines above the statement lead the new first line; its comments stay on it
                lines = list(updated.leading_lines)
                cut = next((i for i, ln in enumerate(lines) if ln.comment is not None), len(lines))
                before[0] = before[0].with_changes(leading_lines=lines[:cut])
                updated = updated.with_changes(leading_lines=lines[cut:])
            return cst.FlattenSentinel(before + [updated] + after)

    return module.visit(_Apply())


#: why a file LibCST would not give back byte for byte is left alone
NO_ROUND_TRIP = "LibCST does not round-trip this file"
#: a line after a lone ``\r`` that ends in a lone ``\n``: deleting its statement leaves that
#: ``\r`` before the ``\n``, one CRLF where two line ends were
MIXED_CR = "mixed lone CR and LF line ends (the fixes could join two lines)"
_CR_THEN_LF = re.compile(r"\r(?!\n)[^\r\n]*(?<!\r)\n")


def _split_tail(source: str) -> tuple[str, str] | None:
    """(the text up to the end of its last line of code, without that line's end; the rest:
    that line end and the blank and comment-only lines after it), or None when no line
    holds code. ``head + tail == source``."""
    lines = split_lines(source)
    i = len(lines)
    while i and (not lines[i - 1].strip(" \t\x0c\r\n") or lines[i - 1].lstrip(" \t\x0c").startswith("#")):
        i -= 1
    if not i:
        return None
    head = "".join(lines[:i - 1]) + lines[i - 1].rstrip("\r\n")
    return head, source[len(head):]


def parse_exact(source: str) -> tuple[cst.Module, str] | None:
    """(a LibCST module whose ``code`` is exactly a prefix of ``source``, the rest of
    ``source``), or None when LibCST cannot give the text back byte for byte.

    The whole text first; else (LibCST 1.x drops a final ``\\r``, a blank line before a
    whitespace-only last line, and comment lines indented deeper than the code before them at
    the end of a file) the text up to its last line of code, the rest (line ends, blank and
    comment lines: no code, nothing to fix) kept as it is. Raises what
    ``libcst.parse_module`` raises when LibCST cannot parse the text at all.
    """
    module = cst.parse_module(source)
    if module.code == source:
        return module, ""
    split = _split_tail(source)
    if split is None:
        return None
    head, tail = split
    try:
        module = cst.parse_module(head)
    except Exception:
        return None
    return (module, tail) if module.code == head else None


def fix_source(source: str, settings: Settings, path: str = "<fix>", unsafe: bool = False,
               is_selected: Callable[[str], bool] = lambda code: True, filename: str | None = None,
               only: Callable[[Finding], bool] | None = None) -> FixResult:
    """Fix one module's text: the fixed text and what remains (``FixResult``).

    ``only`` (None: every finding) limits which findings are fixed (the language server's
    "fix this finding": ``lambda f: (f.line, f.col, f.code) == ...``); every selected
    finding is still linted before and after, so the verification is the same.

    ``filename`` is the file the text comes from, so that the lint before and after the
    fixes reads the project as the CLI's lint does (project mode); None lints the text
    alone. A text that does not parse fixes nothing and remains as one finding (E999)
    when ``is_selected("E999")``.

    Never raises on odd input and never loses a byte outside the fixed spans: a text LibCST
    cannot parse, or a fix that fails, leaves the text as it is; a text LibCST cannot give
    back byte for byte (``parse_exact``) is left as it is with ``reverted`` saying so.
    The cyclic garbage collector is paused meanwhile (as in ``engine.run``): the LibCST
    trees of a large module live until the end, and each full collection walked them all
    again (the time grew 2.4x to 2.8x per doubling of a file with 200 to 1,600 fixes)."""
    paused = gc.isenabled()
    if paused:
        gc.disable()
    try:  # on a thread with a large stack: LibCST's native parser overflows a small one (fix.limits)
        return on_big_stack(_quiet_fix_source, source, settings, path, unsafe, is_selected, filename, only)
    finally:
        if paused:
            gc.enable()


def _quiet_fix_source(*args) -> FixResult:
    """:func:`_fix_source` with the warnings of compiling the user's code silenced, as the lint
    path silences them: ``compile`` and ``ast.parse`` of the text and of each fixed version warn
    (``SyntaxWarning: "is" with a literal``, an invalid escape sequence), and those lines leaked
    to stderr during ``--fix``, once per verification."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        return _fix_source(*args)


def _fix_source(source: str, settings: Settings, path: str, unsafe: bool,
                is_selected: Callable[[str], bool], filename: str | None,
                only: Callable[[Finding], bool] | None = None) -> FixResult:
    from .registry import FIXES

    before = lint(source, settings, path, is_selected, filename)
    if before is None:  # the CLI's lint reports it as E999
        return FixResult(source, 0, 1 if is_selected("E999") else 0)
    rules = all_rules()
    allowed = (SAFE, UNSAFE) if unsafe else (SAFE,)
    todo = [f for f in before if f.code in FIXES and getattr(rules.get(f.code), "fix_applicability", NONE) != NONE
            and (only is None or only(f))]
    if not todo:
        return FixResult(source, 0, len(before), findings=before)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return FixResult(source, 0, len(before), findings=before)
    refused = too_deep(tree)
    if refused:  # LibCST would crash the process (native) or fail (Python recursion) on it
        return FixResult(source, 0, len(before), findings=before, refused=refused)
    if _CR_THEN_LF.search(source):
        return FixResult(source, 0, len(before), MIXED_CR, before)
    try:
        parsed = parse_exact(source)
        if parsed is None:
            return FixResult(source, 0, len(before), NO_ROUND_TRIP, before)
        module, tail = parsed
        wrapper = MetadataWrapper(module)
        ctx = Context(wrapper, tree, source, settings)
    except RecursionError:  # LibCST's Python side nests deeper than the ast (fix.limits)
        return FixResult(source, 0, len(before), findings=before, refused=f"{TOO_DEEP} (LibCST's recursion limit)")
    except Exception as exc:  # LibCST cannot parse what ast can (rare new syntax): leave it, saying so
        return FixResult(source, 0, len(before), f"LibCST cannot parse it ({type(exc).__name__})", before)
    suppressed = noqa_check(source, path)
    units = []  # (n, finding, builder): each finding's planned fix
    for n, finding in enumerate(sorted(todo, key=lambda f: (f.code, f.line, f.col))):
        builder = Builder(ctx, finding)
        try:
            node = builder.node = ctx.node_at(finding)
            ok = node is not None and FIXES[finding.code](builder, node)
            # a fix reported on one line may rewrite others (a use of a renamed import, a
            # callee's loop, an argument on its own line): never one whose `# noqa`
            # suppresses the finding's code
            if ok and any(suppressed(line, finding.code) for line in sorted(rewritten_lines(ctx, builder))):
                ok = False
        except Exception:  # a fix that cannot handle this shape: the finding stays
            ok = False
        if ok and builder.applicability in allowed:
            units.append((n, finding, builder))
    if not units:
        return FixResult(source, 0, len(before), findings=before)
    return _verified(ctx, units, source, tail, before, settings, path, is_selected, filename)


#: the most fix sets a file tries when its fixes do not all verify together (each try
#: applies, compiles and lints the module once: the cost stays linear in its size)
MAX_TRIES = 24


def _verified(ctx: "Context", units: list, source: str, tail: str, before: list, settings: Settings, path: str,
              is_selected: Callable[[str], bool], filename: str | None) -> FixResult:
    """Apply the planned fixes (``units``) and keep the largest set that verifies, rolled
    back per fix, not per file: all of them first; when that fails, each half in turn
    joins what was kept (a half that fails is split again), so a fix that breaks or exposes
    another finding is dropped alone and the file's unrelated fixes still apply. At most
    ``MAX_TRIES`` sets are tried; a fix not tried by then is not applied.
    ``reverted`` says why: the first failure's reason when no fix is kept, else each fix
    not applied (``XLA303 at 12:5: new finding after the fixes: XLA304``)."""
    was = collections.Counter(f.code for f in before)
    undefined_before = undefined_names(source)
    tries = [0]

    def attempt(chosen):
        tries[0] += 1
        _plan(ctx, chosen)
        planned = collections.Counter(finding.code for _, finding, _ in chosen)
        try:
            new_module = _apply(ctx.module, ctx.edits, ctx.inserts, ctx.moves)
            new_tree = ast.parse(new_module.code + tail)
            new_module = ctx.imports.finish(new_module, new_tree)
            new_source = new_module.code + tail
            compile(new_source, path, "exec", dont_inherit=True)
        except Exception as exc:
            return f"the fixed text does not compile ({type(exc).__name__})"
        undefined = sorted(undefined_names(new_source) - undefined_before)
        if undefined:  # an import placed after a use that runs at import time, a shadowed name...
            return "undefined after the fixes: " + ", ".join(undefined)
        after = lint(new_source, settings, path, is_selected, filename)
        if after is None:
            return "the fixed text does not parse"
        now = collections.Counter(f.code for f in after)
        bad = sorted(code for code in now if now[code] > was[code] - planned[code])
        if bad:
            still = [c for c in bad if planned[c]]
            new = [c for c in bad if not planned[c]]
            return "; ".join(filter(None, [still and "still reported after its fix: " + ", ".join(still),
                                           new and "new finding after the fixes: " + ", ".join(new)]))
        return FixResult(new_source, len(before) - len(after), len(after), findings=after,
                         touched=_touched(ctx), fixed_codes=dict(sorted((was - now).items())))

    kept: list = []
    best: list = [None]
    dropped: list = []  # (finding, why)
    first_why: list = []

    def solve(group):
        if tries[0] >= MAX_TRIES:
            dropped.extend((finding, "not tried: too many fixes failed") for _, finding, _ in group)
            return
        result = attempt(kept + group)
        if isinstance(result, FixResult):
            kept.extend(group)
            best[0] = result
            return
        first_why.append(result)
        if len(group) == 1:
            dropped.append((group[0][1], result))
            return
        half = len(group) // 2
        solve(group[:half])
        solve(group[half:])

    solve(list(units))
    if best[0] is None:
        return FixResult(source, 0, len(before), first_why[0], before)
    result = best[0]
    if dropped:
        result.reverted = "; ".join(f"{f.code} at {f.line}:{f.col + 1}: {why}"
                                    for f, why in sorted(dropped, key=lambda d: (d[0].line, d[0].col, d[0].code)))
    return result


def _plan(ctx: "Context", units: list) -> None:
    """Put the edits, statement edits and imports of ``units`` (only) on ``ctx``."""
    ctx.edits, ctx.inserts, ctx.moves = {}, {}, {}
    imports = ctx.imports
    imports.needed, imports.remove_if_unused, imports.remove_module_imports = {}, set(), set()
    seen_keys = set()
    for n, finding, builder in sorted(units, key=lambda u: u[0]):
        for module_name, statement in builder.needs:
            imports.need(module_name, statement)
        imports.remove_if_unused.update(builder.remove_if_unused)
        imports.remove_module_imports.update(builder.remove_modules)
        for target, key, fn in builder.edits:
            if key and (id(target), key) in seen_keys:
                continue
            seen_keys.add((id(target), key))
            ctx.edits.setdefault(id(target), []).append(((finding.code, n), key, fn))
        for kind, stmt, where, make, key in builder.statement_edits:
            if kind == "move":
                ctx.moves[id(stmt)] = id(where)
                continue
            if key and (id(stmt), where, key) in seen_keys:
                continue
            seen_keys.add((id(stmt), where, key))
            ctx.inserts.setdefault(id(stmt), {}).setdefault(where, []).append(((finding.code, n), key, make))


def _touched(ctx: Context) -> tuple:
    """The (first, last) line spans of the input the planned edits change (``FixResult.touched``)."""
    nodes = {id(node): r for node, r in ctx.positions.items()}
    spans = set()
    for key in ctx.edits:
        if key in nodes:
            spans.add((nodes[key].start.line, nodes[key].end.line))
    for key, plan in ctx.inserts.items():
        if key in nodes:
            if plan.get("before"):
                spans.add((nodes[key].start.line, nodes[key].start.line))
            if plan.get("after"):
                spans.add((nodes[key].end.line, nodes[key].end.line))
    for moved, anchor in ctx.moves.items():
        if moved in nodes and anchor in nodes:
            spans.add((nodes[moved].start.line, nodes[moved].end.line))
            spans.add((nodes[anchor].end.line, nodes[anchor].end.line))
    if not spans and ctx.imports.needed:  # a fix that only adds an import (XLA406: `import torch_xla`)
        spans.add(_leading_imports(ctx.tree))
    return tuple(sorted(spans))


def _leading_imports(tree) -> tuple[int, int]:
    """The lines of the module's leading imports (before its first ``def`` / ``class``),
    where an added import goes; ``(1, 1)`` when there are none."""
    lines = []
    for stmt in getattr(tree, "body", ()):
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            break
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            lines += [stmt.lineno, stmt.end_lineno or stmt.lineno]
    return (min(lines), max(lines)) if lines else (1, 1)
