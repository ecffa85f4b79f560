"""Small LibCST edits that keep the call's layout: add, drop and replace arguments.

Every helper takes the *updated* node (earlier fixes may have changed it) and finds the
arguments it edits by keyword or position, never by identity.
"""

from __future__ import annotations

import libcst as cst

EMPTY = cst.SimpleWhitespace("")
SPACE = cst.SimpleWhitespace(" ")


def expr(text: str) -> cst.BaseExpression:
    return cst.parse_expression(text)


def kwarg(name: str, value: cst.BaseExpression) -> cst.Arg:
    return cst.Arg(value=value, keyword=cst.Name(name),
                   equal=cst.AssignEqual(whitespace_before=EMPTY, whitespace_after=EMPTY))


def keyword_index(call: cst.Call, name: str) -> int | None:
    for i, arg in enumerate(call.args):
        if arg.keyword is not None and arg.keyword.value == name:
            return i
    return None


def positional_indices(call: cst.Call) -> list[int]:
    """Indices of the plain positional arguments, or all up to the first ``*args``."""
    out = []
    for i, arg in enumerate(call.args):
        if arg.keyword is not None or arg.star == "**":
            break
        if arg.star == "*":
            return out  # later positions are unknown
        out.append(i)
    return out


def has_star(call: cst.Call) -> bool:
    return any(arg.star for arg in call.args)


def arg_index(call: cst.Call, name: str, position: int | None) -> int | None:
    """The argument bound to parameter ``name`` (keyword, or ``position`` among the
    positional ones)."""
    index = keyword_index(call, name)
    if index is not None or position is None:
        return index
    positional = positional_indices(call)
    return positional[position] if position < len(positional) else None


def _clean(ws):
    """A copy of the whitespace after a comma without its comments (so a copied line break
    does not duplicate a comment)."""
    if isinstance(ws, cst.ParenthesizedWhitespace):
        return cst.ParenthesizedWhitespace(first_line=cst.TrailingWhitespace(), empty_lines=(),
                                           indent=ws.indent, last_line=ws.last_line)
    return ws


def _between(call: cst.Call, before: int):
    """The whitespace that separates arguments in this call, for a comma after argument
    ``before``: the one after the previous comma, the call's line break when the arguments
    start on their own line, else one space."""
    for i in range(before - 1, -1, -1):
        comma = call.args[i].comma
        if isinstance(comma, cst.Comma):
            return _clean(comma.whitespace_after)
    last = call.args[-1] if call.args else None
    vertical = last is not None and (isinstance(last.comma, cst.Comma)
                                     or isinstance(last.whitespace_after_arg, cst.ParenthesizedWhitespace))
    if vertical and isinstance(call.whitespace_before_args, cst.ParenthesizedWhitespace):
        return _clean(call.whitespace_before_args)  # one argument per line: the new one too
    return SPACE


def append_arg(call: cst.Call, arg: cst.Arg) -> cst.Call:
    args = list(call.args)
    if not args:
        return call.with_changes(args=[arg.with_changes(comma=cst.MaybeSentinel.DEFAULT)])
    last = args[-1]
    between = _between(call, len(args) - 1)
    new = arg.with_changes(comma=last.comma, whitespace_after_arg=last.whitespace_after_arg)
    args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=between), whitespace_after_arg=EMPTY)
    return call.with_changes(args=[*args, new])


def insert_arg(call: cst.Call, index: int, arg: cst.Arg) -> cst.Call:
    if index >= len(call.args):
        return append_arg(call, arg)
    args = list(call.args)
    between = _between(call, index) if index else SPACE
    args.insert(index, arg.with_changes(comma=cst.Comma(whitespace_after=between), whitespace_after_arg=EMPTY))
    return call.with_changes(args=args)


def _has_comment(ws) -> bool:
    return isinstance(ws, cst.ParenthesizedWhitespace) and (
        ws.first_line.comment is not None or any(line.comment is not None for line in ws.empty_lines))


def _join(before, after, keep_after: bool):
    """The whitespace for ``before`` + a removed argument + ``after`` without the argument:
    ``after`` when ``keep_after`` (the removed one was last: ``after`` leads to the ``)``),
    else ``before``; when that would drop the other's comments, both lines' comments, the
    removed argument's on a line of its own at its indentation."""
    kept, other = (after, before) if keep_after else (before, after)
    if not _has_comment(other):
        return kept
    if not isinstance(before, cst.ParenthesizedWhitespace):
        return after  # `f(a, b,  # why` -> `f(a,  # why`
    lines = list(before.empty_lines)
    if isinstance(after, cst.ParenthesizedWhitespace):
        if after.first_line.comment is not None:
            lines.append(cst.EmptyLine(indent=before.indent, whitespace=before.last_line,
                                       comment=after.first_line.comment))
        lines.extend(after.empty_lines)
        return before.with_changes(empty_lines=lines, indent=after.indent, last_line=after.last_line)
    return before.with_changes(empty_lines=lines, indent=True, last_line=EMPTY)


def remove_arg(call: cst.Call, index: int) -> cst.Call:
    """``call`` without its argument ``index``; the comments around it stay (a trailing
    ``# why`` on a line of its own where the argument was)."""
    args = list(call.args)
    removed = args.pop(index)
    changes = {"args": args}
    if index == len(args) and args:  # it was the last: the one before takes its comma and spacing
        prev = args[-1]
        into = prev.comma.whitespace_after if isinstance(prev.comma, cst.Comma) else EMPTY
        if isinstance(removed.comma, cst.Comma):
            args[-1] = prev.with_changes(
                comma=removed.comma.with_changes(whitespace_after=_join(into, removed.comma.whitespace_after, True)),
                whitespace_after_arg=removed.whitespace_after_arg)
        else:
            args[-1] = prev.with_changes(comma=removed.comma,
                                         whitespace_after_arg=_join(into, removed.whitespace_after_arg, True))
    elif args and isinstance(removed.comma, cst.Comma):  # another follows it
        if index:
            prev = args[index - 1]
            args[index - 1] = prev.with_changes(comma=prev.comma.with_changes(
                whitespace_after=_join(prev.comma.whitespace_after, removed.comma.whitespace_after, False)))
        else:
            changes["whitespace_before_args"] = _join(call.whitespace_before_args, removed.comma.whitespace_after,
                                                      False)
    if not args:
        changes["whitespace_before_args"] = EMPTY
    return call.with_changes(**changes)


def drop_param(call: cst.Call, name: str, position: int | None = None) -> cst.Call | None:
    """Drop the argument bound to ``name``: a keyword goes; a positional one goes when no
    positional argument follows it, else it becomes ``None`` (a ``*args`` after it counts:
    its items would move into the freed position). None when it cannot be told (a
    ``*args`` before it)."""
    index = arg_index(call, name, position)
    if index is None:
        return call
    if call.args[index].keyword is None and index + 1 < len(call.args) \
            and call.args[index + 1].keyword is None and call.args[index + 1].star != "**":
        return set_value(call, index, cst.Name("None"))
    return remove_arg(call, index)


def set_value(call: cst.Call, index: int, value: cst.BaseExpression) -> cst.Call:
    args = list(call.args)
    args[index] = args[index].with_changes(value=value)
    return call.with_changes(args=args)


def set_param(call: cst.Call, name: str, position: int | None, value: cst.BaseExpression) -> cst.Call:
    """Bind ``name`` to ``value``: replace what is passed (keyword or positional), else add
    the keyword at the end."""
    index = arg_index(call, name, position)
    if index is not None:
        return set_value(call, index, value)
    return append_arg(call, kwarg(name, value))


def quote_of(node: cst.CSTNode, default: str = '"') -> str:
    """The quote character of the first plain string literal in ``node``."""
    found = []

    class _Find(cst.CSTVisitor):
        def visit_SimpleString(self, s):
            if not found:
                body = s.value.lstrip("rRbBuUfF")
                found.append("'" if body.startswith("'") else '"')
            return False

    node.visit(_Find())
    return found[0] if found else default


def string(text: str, quote: str = '"') -> cst.SimpleString:
    return cst.SimpleString(f"{quote}{text}{quote}")


def string_value(node) -> str | None:
    """The value of a plain (non-f, non-bytes) string literal, else None."""
    if isinstance(node, cst.SimpleString) and "b" not in node.prefix.lower():
        try:
            value = node.evaluated_value
        except Exception:  # pragma: no cover - malformed literal
            return None
        return value if isinstance(value, str) else None
    return None


def dotted(node) -> str | None:
    """``a.b.c`` for a Name/Attribute chain, else None."""
    parts = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if not isinstance(node, cst.Name):
        return None
    parts.append(node.value)
    return ".".join(reversed(parts))
