"""What the fixer's parser can take: a cheap check over the ``ast`` before LibCST sees a text.

LibCST's native parser (Rust) recurses once per level of nesting and per term of an
``and`` / ``or`` chain, and a stack overflow there is a SIGSEGV: the process dies with no
message (``--fix`` exited 139 and the files after it were not processed; the language
server died on a code action). LibCST's Python side then recurses per level too (its
visitors and code generation), and past Python's recursion limit the fix silently does not
apply. So the fixer (:func:`flake8_xla.fix.fixer.fix_source`) never hands LibCST a module
whose :func:`depth` passes :data:`MAX_DEPTH`: the file gets one line, ``path: not fixed:
too deeply nested for the fixer``, and the run goes on; and it runs LibCST on a thread of
its own with a large stack (:data:`STACK_SIZE`), so the native limit does not depend on the
user's ``ulimit -s`` nor on the thread it is called from.

Measured on LibCST 1.9.0, CPython 3.11, x86-64 Linux (``tests/test_fix_limits.py`` keeps the
numbers honest; docs/internals.md has the table): on the main thread's 8 MB stack the native
parser crashes from about 7,100 terms of one ``and`` chain (about 1.2 KB of stack per term);
on a 512 KB stack from 421 terms, 213 nested ``lambda:``, 333 nested conditional expressions,
351 attribute accesses, 497 unary operators, 76 nested brackets. The costliest level
(a bracket, about 7 KB) is bounded by CPython's own limit of 200 nested brackets, the
others by the ``ast``'s limit (about 3,000 levels); huge flat literals (a 10 MB string, a
list of a million items, a 100,000-digit integer) parse without a crash, and an implicit
concatenation of thousands of strings is refused by LibCST itself (``ParserSyntaxError``).
On LibCST's Python side a fix applies up to about 400 levels (a chain of 300 terms is
fixed, one of 500 is not), so :data:`MAX_DEPTH` is 300: below every failure, and 23 times
below the native crash on an 8 MB stack (the fixer's thread has 16 times that).

Only the standard library here (the check runs before LibCST is imported by the caller).
"""

from __future__ import annotations

import ast
import threading

#: the deepest module the fixer hands to LibCST (:func:`depth`); see the module's docstring
MAX_DEPTH = 300
#: the stack of the thread the fixer runs LibCST on (virtual memory: only what is used is touched)
STACK_SIZE = 128 << 20
TOO_DEEP = "too deeply nested for the fixer"
#: nodes LibCST nests two deep (a list and its elements, a call and its arguments)
_BRACKETS = (ast.List, ast.Tuple, ast.Set, ast.Dict, ast.Call, ast.ListComp, ast.SetComp, ast.DictComp,
             ast.GeneratorExp, ast.Subscript)


def depth(tree: ast.AST) -> tuple[int, int]:
    """(how deep ``tree`` nests, the line where it is deepest): the most nodes on a path
    from the root, where each ``and`` / ``or`` counts once per term (LibCST nests a chain
    of n terms n deep; the ``ast`` keeps it flat) and a bracket (a list, a call, a
    subscript...) twice (LibCST puts its elements in nodes of their own). Iterative: any tree
    the ``ast`` can build."""
    best, line = 0, 1
    stack = [(tree, 1, 1)]
    while stack:
        node, level, at = stack.pop()
        at = getattr(node, "lineno", at)
        if isinstance(node, ast.BoolOp):
            level += len(node.values) - 1
        elif isinstance(node, _BRACKETS):  # LibCST: the node and its element / argument
            level += 1
        if level > best:
            best, line = level, at
        for child in ast.iter_child_nodes(node):
            stack.append((child, level + 1, at))
    return best, line


def too_deep(tree: ast.AST) -> str | None:
    """Why LibCST must not get the module of ``tree`` (:data:`TOO_DEEP`, where and how
    deep), or None."""
    levels, line = depth(tree)
    if levels <= MAX_DEPTH:
        return None
    return f"{TOO_DEEP} (line {line}: {levels} levels deep, the fixer takes {MAX_DEPTH})"


def on_big_stack(fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` on a new thread with :data:`STACK_SIZE` of stack (its value, or
    its exception, comes back here); in this thread when such a thread cannot be started."""
    box: dict = {}

    def target() -> None:
        try:
            box["value"] = fn(*args, **kwargs)
        except BaseException as exc:  # noqa: B036 - handed back to the caller as it is
            box["error"] = exc

    try:
        old = threading.stack_size(STACK_SIZE)
    except (ValueError, RuntimeError):  # a platform that does not let the size be set
        return fn(*args, **kwargs)
    try:
        thread = threading.Thread(target=target, name="flake8-xla-fixer", daemon=True)
        thread.start()
    except RuntimeError:  # no memory for that stack: here, behind the depth check
        return fn(*args, **kwargs)
    finally:
        threading.stack_size(old)
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]
