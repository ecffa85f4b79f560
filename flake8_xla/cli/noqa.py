"""``flake8-xla --add-noqa``: append ``# noqa: XLAnnn`` to each finding's line, as Ruff's
``--add-noqa`` does, so a codebase adopts the linter with today's findings marked in place.

- The comment goes where flake8 looks for it: flake8 reads a ``# noqa`` anywhere in the
  physical lines between two line-ending tokens (a multi-line string, a backslash
  continuation), so a finding on a line inside a multi-line string gets the comment at the
  end of that span's last line, the only place a comment can go.
- An existing ``# noqa: E501`` on that line gets the new codes merged in (``# noqa: E501,
  XLA101``); a bare ``# noqa`` is left alone (it already silences every code).
- Idempotent: a second run finds nothing left to silence and changes nothing.
- A notebook (``.ipynb``) gets the comment on its cell's own source line: the findings'
  lines are lines of their cell, the comment places are found in the cells' module (as
  the lint reads it), and only the ``source`` values of the changed cells are rewritten in
  the JSON text (:meth:`flake8_xla.notebook.Notebook.with_sources`, as ``--fix`` does);
  every other byte (outputs, metadata, layout) is kept, and the result must read back as
  the same notebook with the new sources, else the file is not written. A magic line
  (``!pip install x``) is never given a comment (the shell would get it).
- Files are rewritten in their own encoding and line endings, atomically, through the same
  writer as ``--fix`` (:func:`flake8_xla.fix.write_atomic`); a file that cannot be read,
  decoded or written, that changed meanwhile, or that is reached through a link to outside
  the project, gets one line on stderr (``path: not written: why``) and is left as it was.
"""

from __future__ import annotations

import io
import os
import tokenize
from pathlib import Path
from typing import TextIO

from ..lines import split_lines, universal_lines
from ..notebook import is_notebook
from ..registry import all_rules
from .files import Result


def comment_lines(text: str) -> tuple[dict[int, int], dict[int, int]]:
    """(``mapping``, ``comments``) of ``text``: for each line (1-based) that tokens cover, the
    line whose end can hold the comment flake8 reads for it -- the last line of the span
    between two ``NEWLINE`` / ``NL`` tokens (flake8's ``FileProcessor._noqa_line_mapping``) --
    and the column where each line's comment starts. Raises :class:`SyntaxError` or
    :class:`tokenize.TokenError` when the text does not tokenize."""
    lines = universal_lines(text)
    mapping: dict[int, int] = {}
    comments: dict[int, int] = {}
    low, high = len(lines) + 2, -1
    for tok in tokenize.generate_tokens(io.StringIO("".join(lines)).readline):
        if tok.type in (tokenize.ENDMARKER, tokenize.DEDENT):
            continue
        if tok.type == tokenize.COMMENT:
            comments[tok.start[0]] = tok.start[1]
        low, high = min(low, tok.start[0]), max(high, tok.end[0])
        if tok.type in (tokenize.NL, tokenize.NEWLINE):
            for n in range(low, high + 1):
                mapping[n] = high
            low, high = len(lines) + 2, -1
    return mapping, comments


def _ending(line: str) -> tuple[str, str]:
    for end in ("\r\n", "\n", "\r"):
        if line.endswith(end):
            return line[: -len(end)], end
    return line, ""


#: ``add_to_line(comment=ANY)``: the line's comment is not known (a match anywhere counts)
ANY = -1


def add_to_line(line: str, codes: list[str], comment: int | None = ANY) -> str | None:
    """``line`` (with its line end) with ``codes`` in its ``# noqa`` comment: appended as
    ``  # noqa: A, B``, or merged into an existing ``# noqa: X`` (codes it already names are
    not repeated). ``comment``: the column where the line's comment starts (``None``: the line
    has none; :data:`ANY`: not known). ``None`` when nothing changes: a bare ``# noqa`` is
    there, every code is, or flake8 would read a ``# noqa`` before the comment (inside a
    string: the line is left alone rather than the string edited)."""
    from flake8.defaults import NOQA_INLINE_REGEXP

    body, end = _ending(line)
    match = NOQA_INLINE_REGEXP.search(body)
    if match is not None and comment != ANY and (comment is None or match.start() < comment):
        return None  # `s = "# noqa: E501"`: flake8 reads the string; never edit a string
    if match is None:
        return body.rstrip(" \t") + "  # noqa: " + ", ".join(codes) + end
    if match.group("codes") is None:
        return None  # a bare `# noqa`: left alone
    present = match.group("codes")
    known = {c.upper() for c in present.replace(",", " ").split()}
    new = [c for c in codes if c not in known]
    if not new:
        return None
    stripped = present.rstrip(", \t")
    sep = "," if "," in stripped and ", " not in stripped else ", "  # the comment's own style
    at = match.start("codes") + len(stripped)
    return f"{body[:at]}{sep}{sep.join(new)}{body[at:]}{end}"


def add_noqa_text(text: str, findings: list[tuple[int, str]]) -> tuple[str, int]:
    """``text`` with ``# noqa`` codes added for ``findings`` ((line, code), 1-based lines), and
    how many lines changed. Raises :class:`SyntaxError` / :class:`tokenize.TokenError` when
    the text does not tokenize."""
    where, comments = comment_lines(text)
    wanted: dict[int, list[str]] = {}
    for line, code in findings:
        target = where.get(line, line)
        codes = wanted.setdefault(target, [])
        if code not in codes:
            codes.append(code)
    lines = split_lines(text)
    changed = 0
    for target in sorted(wanted):
        if not 1 <= target <= len(lines):
            continue
        new = add_to_line(lines[target - 1], sorted(wanted[target]), comments.get(target))
        if new is not None:
            lines[target - 1] = new
            changed += 1
    return "".join(lines), changed


def add_noqa_notebook(text: str, findings: list[tuple[int, int, str]]) -> tuple[str, int]:
    """The notebook JSON ``text`` with ``# noqa`` codes added for ``findings`` ((cell index,
    1-based line in that cell, code), as the lint reports a notebook's findings), and how many
    lines changed. Raises :class:`NotFixed` when the notebook cannot be read or its cells
    cannot be rewritten, :class:`SyntaxError` / :class:`tokenize.TokenError` when its module
    does not tokenize."""
    from ..fix import NotFixed
    from ..notebook import NotebookError, parse

    try:
        nb = parse(text)
    except NotebookError as exc:
        raise NotFixed(f"not a notebook: {exc}") from None
    where, comments = comment_lines("".join(nb.module_lines()))
    by_index = {cell.index: (k, cell) for k, cell in enumerate(nb.cells)}
    wanted: dict[tuple[int, int], list[str]] = {}  # (cell position, 0-based line in it): codes
    for index, line, code in findings:
        if index not in by_index:
            continue
        k, cell = by_index[index]
        if not 1 <= line <= len(cell.python):
            continue
        target = where.get(nb.starts[k] + line - 1, nb.starts[k] + line - 1)
        located = nb.locate(target)
        if located is None or located[0] is not cell:  # (a statement never spans cells)
            continue
        codes = wanted.setdefault((k, located[1] - 1), [])
        if code not in codes:
            codes.append(code)
    sources: dict[int, list[str]] = {}
    changed = 0
    for k, line0 in sorted(wanted):
        cell = nb.cells[k]
        if line0 in cell.magic:
            continue
        lines = sources.setdefault(k, split_lines(cell.source))
        if line0 >= len(lines):
            continue
        comment = comments.get(nb.starts[k] + line0)
        if comment is not None:
            comment += cell.shift[line0]  # the module line lost the cell line's first characters
        new = add_to_line(lines[line0], sorted(wanted[k, line0]), comment)
        if new is not None:
            lines[line0] = new
            changed += 1
    changes = [(nb.cells[k], "".join(lines)) for k, lines in sources.items()]
    try:
        new_text = nb.with_sources(changes)
        again = parse(new_text)
    except NotebookError as exc:
        raise NotFixed(str(exc)) from None
    written = {cell.index: source for cell, source in changes}
    if [(c.index, c.source) for c in again.cells] != [(c.index, written.get(c.index, c.source)) for c in nb.cells]:
        raise NotFixed("its cells would not read back as written")
    return new_text, changed


def add_noqa(results: list[Result], err: TextIO) -> tuple[int, int, int]:
    """Add the comments for ``results`` (the reported findings; not those of standard input,
    nor ``E902`` / ``E999`` / ``XLA000``, which a ``# noqa`` does not describe) to their files.
    Returns (lines changed, files changed, files not written); each file not written has had
    its line on ``err``. Never raises for a file's sake."""
    from ..fix import NotFixed, _project_root, _read, _round_trips, decode, encode, write_atomic

    rules = all_rules()
    by_path: dict[str, list[tuple]] = {}
    for r in results:
        if r.code in rules:  # a notebook's findings: (cell, line in the cell, code)
            by_path.setdefault(r.path, []).append((r.line, r.code) if r.cell is None else (r.cell, r.line, r.code))
    total = files = failed = 0
    root: Path | None = None
    for path, findings in by_path.items():
        try:
            real = Path(os.path.realpath(path))
            if real != Path(os.path.abspath(path)):  # a link on the way: write its target, in the project only
                root = root or Path(os.path.realpath(_project_root()))
                if not real.is_relative_to(root):
                    raise NotFixed(f"its target {real} is outside the project root {root}")
            read = _read(path)
            text, encoding = decode(read.data)
            try:
                if is_notebook(path):
                    new_text, changed = add_noqa_notebook(text, findings)
                else:
                    new_text, changed = add_noqa_text(text, findings)
            except (SyntaxError, tokenize.TokenError) as exc:
                raise NotFixed(f"it does not tokenize ({type(exc).__name__})") from None
            if not changed:
                continue
            _round_trips(text, encoding, read.data)
            write_atomic(real, encode(new_text, encoding), read)
        except (NotFixed, OSError) as exc:
            why = str(exc) if isinstance(exc, NotFixed) else f"cannot write it: {exc.strerror or exc}"
            err.write(f"{path}: not written: {why}\n")
            failed += 1
            continue
        total += changed
        files += 1
    return total, files, failed
