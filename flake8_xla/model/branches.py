"""Branches: which places of a function can run in the same pass. ``if`` branches as
``(test, polarity)`` frames (``not`` and negated comparisons folded), ``match`` arms and
``try`` bodies against their handlers: :meth:`Branches.exclusive` (never together) and
:meth:`Branches.runs_with` (together on a visible path).
"""

from __future__ import annotations

import ast
import bisect
import collections

from .scopes import Ctx, _expr_key


_BLOCK_ITEMS = (ast.stmt, ast.excepthandler, ast.match_case)


def _end(body: list) -> int:
    last = body[-1] if body else None
    return getattr(last, "end_lineno", None) or getattr(last, "lineno", 0)


class Branches:
    """Mixin of :class:`~flake8_xla.model.Model`; see the module docstring."""

    #: branch frames read per place; past it the outer frames are one opaque mark (generated
    #: code: hundreds of early returns in one function), so every query stays bounded
    BRANCH_LIMIT = 64

    def branch_frames(self, ctx: Ctx) -> frozenset:
        """The ``if`` branches around ``ctx`` as ``(test key, polarity)`` pairs, ``not`` and
        negated comparisons folded in (``if not tpu:`` is the ``False`` branch of ``if tpu:``).
        Only the innermost :attr:`BRANCH_LIMIT` frames are read; a deeper chain adds a mark
        naming the link where reading stopped, so two places compare equal or nested past
        the limit only when they share that link (linear work: N early returns would
        otherwise cost N frames at each of N places)."""
        key = ("bframes", id(ctx))
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        items = self._cache.get("bitems")
        if items is None:
            items = self._cache["bitems"] = {}
        out = set()
        node = ctx.frames or None
        for _ in range(self.BRANCH_LIMIT):
            if node is None:
                break
            frame = node.frame
            if isinstance(frame, tuple):
                fkey = (id(frame[0]), frame[1])
                item = items.get(fkey, items)
                if item is items:
                    item = items[fkey] = self._branch_item(*frame)
                if item is not None:
                    out.add(item)
            node = node.parent
        if node is not None:
            out.add((("deeper", id(node)), True))
        result = self._cache[key] = frozenset(out)
        return result

    def _branch_item(self, test, polarity):
        while type(test) is ast.UnaryOp and type(test.op) is ast.Not:
            test, polarity = test.operand, not polarity
        if type(test) is ast.Compare and len(test.ops) == 1 and type(test.ops[0]) in self._NEGATED:
            test = ast.Compare(test.left, [self._NEGATED[type(test.ops[0])]()], test.comparators)
            polarity = not polarity
        k = _expr_key(test)
        return None if k is None else (k, polarity)

    _NEGATED = {ast.NotEq: ast.Eq, ast.IsNot: ast.Is, ast.NotIn: ast.In}

    def exclusive(self, a: tuple[ast.AST, Ctx], b: tuple[ast.AST, Ctx]) -> bool:
        """True when the two nodes never run in the same pass: opposite branches of one ``if``
        (or of ``if t: ...; continue``), different ``case`` arms of one ``match``, or a
        ``try`` body and its handler."""
        fa, fb = self.branch_frames(a[1]), self.branch_frames(b[1])
        if any((k, not p) in fb for k, p in fa):
            return True
        owner = a[1].func.node if a[1].func is not None else self.tree
        in_a = self._arms_at(owner, a[0].lineno)
        if not in_a:
            return False
        in_b = self._arms_at(owner, b[0].lineno)
        return any(arm != in_b.get(group, arm) for group, arm in in_a.items())

    def _arms_at(self, owner: ast.AST, line: int) -> dict[int, int]:
        """{group: arm} for the arms of :meth:`_arms` (``match``/``try`` groups) whose lines
        hold ``line``, found by bisect and the chain of enclosing arms (arms nest like the
        blocks they are), memoised per line: a query costs the nesting depth, not the
        number of ``try`` blocks in ``owner``."""
        key = ("arm_index", id(owner))
        index = self._cache.get(key)
        if index is None:
            spans = sorted((lo, -hi, group, arm) for group, arms in enumerate(self._arms(owner))
                           for arm, (lo, hi) in enumerate(arms))
            starts, ends, parent, stack = [s[0] for s in spans], [-s[1] for s in spans], [], []
            for j, lo in enumerate(starts):
                while stack and ends[stack[-1]] < lo:
                    stack.pop()
                parent.append(stack[-1] if stack else -1)
                stack.append(j)
            index = self._cache[key] = (starts, ends, parent, [(s[2], s[3]) for s in spans], {})
        starts, ends, parent, labels, memo = index
        found = memo.get(line)
        if found is None:
            found = memo[line] = {}
            j = bisect.bisect_right(starts, line) - 1
            while j >= 0 and ends[j] < line:  # the innermost arm holding the line encloses arm j
                j = parent[j]
            while j >= 0:
                group, arm = labels[j]
                found.setdefault(group, arm)
                j = parent[j]
        return found

    def _arms(self, owner: ast.AST) -> list[list[tuple[int, int]]]:
        """Line spans of the mutually exclusive arms of each ``match`` and ``try`` in
        ``owner`` (memoised; walked only when a rule asks about two calls in it)."""
        key = ("arms", id(owner))
        if key in self._cache:
            return self._cache[key]
        out = []
        todo = collections.deque([owner])  # breadth first, like ast.walk, through statements only:
        while todo:  # a try or match never sits inside an expression
            node = todo.popleft()
            for field in node._fields:
                v = getattr(node, field, None)
                if type(v) is list and v and isinstance(v[0], _BLOCK_ITEMS):
                    todo.extend(v)
            t = type(node)
            if t is ast.Match:
                out.append([(c.pattern.lineno, _end(c.body)) for c in node.cases])
            elif t is ast.Try or t is getattr(ast, "TryStar", None):
                if node.body and node.handlers:
                    out.append([(node.body[0].lineno, _end(node.body))]
                               + [(h.lineno, _end(h.body)) for h in node.handlers])
        self._cache[key] = out
        return out

    def runs_with(self, a: tuple[ast.AST, Ctx], b: tuple[ast.AST, Ctx]) -> bool:
        """True when there is a visible path on which both run: they are not exclusive, and
        the branches around one are all around the other (whenever the more guarded one
        runs, so does the other); two different unrelated conditions are unknown."""
        if self.exclusive(a, b):
            return False
        fa, fb = self.branch_frames(a[1]), self.branch_frames(b[1])
        return fa <= fb or fb <= fa
