"""Jupyter notebooks (``.ipynb``): their code cells as one Python module, and back.

:func:`parse` reads a notebook's JSON text into a :class:`Notebook`: the code cells (markdown
and raw cells are skipped, and so is a notebook whose kernel is not Python), each turned into
Python as Jupyter runs it (:func:`cell_python`), one line of Python per line of the cell, so
a position in the module is a position in a cell. The cells of one notebook are one module,
as one kernel runs them: a name bound in cell 2 resolves in cell 5.

IPython magics and shell escapes: with IPython importable, its own input transformer
(``IPython.core.inputtransformer2.TransformerManager``) turns ``%pip install x``,
``!ls`` and ``x = !ls`` into the calls Jupyter runs (``get_ipython().system('ls')``...);
without it (or where it joins lines: a magic continued with ``\\``), the rule Ruff documents:
a magic or escape line becomes a no-op (``...``) padded to its length. A cell magic runs its
body as Python only for :data:`PYTHON_CELL_MAGICS` (``%%time``, ``%%timeit``, ``%%capture``...:
the magic line becomes a comment); any other (``%%bash``, ``%%writefile``) skips the cell.

The format is read with ``nbformat`` when it is installed (``pip install
'flake8-xla[notebook]'``: it also reads nbformat 3 notebooks); without it with ``json``, which
reads nbformat 4 notebooks (the format Jupyter has written since 2015) and says so for older
ones. Positions in the JSON text (for SARIF and GitHub annotations, which show the file's
raw lines) and the edits of ``--fix`` come from a scan of the JSON text itself: only the
``source`` of a changed cell is rewritten, in the style found (a list of lines or one
string, its indentation, ``ensure_ascii``), and every other byte is kept.

Only the standard library is needed here (``nbformat`` and IPython are used when present),
so the IPython extension (:mod:`flake8_xla.ipython`) works with the base install.
"""

from __future__ import annotations

import bisect
import dataclasses
import difflib
import json
import logging
import re
import warnings

from .lines import split_lines

#: cell magics whose body Jupyter runs as Python (Ruff's list): the cell is linted
PYTHON_CELL_MAGICS = frozenset({"capture", "debug", "prun", "pypy", "python", "python3", "time", "timeit"})
SUFFIX = ".ipynb"

_WS = " \t\n\r"
# `x = !ls`, `a, b = %sx ls`: an assignment whose value is a magic or escape (the fallback's test)
_ASSIGN_MAGIC = re.compile(r"^(\s*[\w.\[\], ()*]+?\s*=\s*)([%!].*)$", re.S)


#: a module line a finding's message quotes (``on line 15``, ``(line 15)``)
_QUOTED_LINE = re.compile(r"\bline (\d+)\b")


def is_notebook(path: str | None) -> bool:
    """Whether ``path`` names a notebook (its suffix is ``.ipynb``, any case)."""
    return bool(path) and str(path).lower().endswith(SUFFIX)


class NotebookError(Exception):
    """The text is not a notebook flake8-xla can read: the message says why (one line)."""


@dataclasses.dataclass
class Cell:
    """One code cell.

    ``index`` is its 1-based position among every cell of the notebook (markdown and raw
    cells count: it is the number a notebook UI shows). ``source`` is its text, ``python``
    the lines of Python it runs as (as many as ``source`` has lines, each ending in a line
    break), ``magic`` the 0-based numbers of the lines that were magics (``--fix`` puts them
    back), ``shift`` per line the characters Jupyter dropped from its start (an indented first
    line's indentation, a ``>>>`` prompt). ``span`` and ``items``: where the ``source`` value,
    and each of its strings, lies in the JSON text (character offsets, end exclusive);
    ``None`` when unknown."""

    index: int
    source: str
    python: list[str]
    magic: set[int]
    shift: list[int]
    span: tuple[int, int] | None = None
    items: list[tuple[int, int]] | None = None


@dataclasses.dataclass
class Notebook:
    """A notebook's JSON ``text`` and its linted code ``cells`` (cells whose magic skips them
    are not there). The module is the cells' Python lines in order; ``starts[i]`` is the
    module line (1-based) where ``cells[i]`` starts."""

    text: str
    cells: list[Cell]
    starts: list[int] = dataclasses.field(default_factory=list)

    def __post_init__(self) -> None:
        line = 1
        self.starts = []
        for cell in self.cells:
            self.starts.append(line)
            line += len(cell.python)
        self._line_starts = None
        self._maps: dict[int, _CellMap] = {}

    def module_lines(self) -> list[str]:
        """The module's lines (each ends in ``\\n``)."""
        return [line for cell in self.cells for line in cell.python]

    def locate(self, line: int) -> tuple[Cell, int] | None:
        """(cell, 1-based line in it) of module line ``line``; None past the end."""
        i = bisect.bisect_right(self.starts, line) - 1
        if i < 0:
            return None
        cell = self.cells[i]
        in_cell = line - self.starts[i] + 1
        return (cell, in_cell) if in_cell <= len(cell.python) else None

    def cell_lines(self, message: str) -> str:
        """``message`` with each module line it quotes (``line 15``, ``(line 15)``) said as the
        cell and the line in it (``cell 3, line 2``): a notebook has no module lines."""
        def cell_line(match):
            where = self.locate(int(match.group(1)))
            return match.group(0) if where is None else f"cell {where[0].index}, line {where[1]}"

        return _QUOTED_LINE.sub(cell_line, message)

    def raw_position(self, cell: Cell, line: int, char_col: int) -> tuple[int, int] | None:
        """(1-based line, 1-based column in characters) in the JSON text of the character at
        1-based ``line`` and ``char_col`` of ``cell``'s source (a column past the line's end
        is its end). None when the source's place in the text is unknown. The cell's maps
        are built once, so each call costs a few bisections."""
        if not cell.items:
            return None
        maps = self._maps.get(cell.index)
        if maps is None:
            maps = self._maps[cell.index] = _CellMap(self.text, cell)
        return self._line_col(maps.raw_offset(line, char_col)) if 1 <= line <= len(maps.line_starts) else None

    def _line_col(self, offset: int) -> tuple[int, int]:
        if self._line_starts is None:
            self._line_starts = [0] + [m.end() for m in re.finditer("\n", self.text)]
        i = bisect.bisect_right(self._line_starts, offset) - 1
        return i + 1, offset - self._line_starts[i] + 1

    def apply(self, fixed_module: str) -> tuple[str, list[tuple[Cell, str]]]:
        """The notebook's JSON text with the module rewritten to ``fixed_module`` (the module
        of :meth:`module_lines` after fixes), and the (cell, new source) of each changed cell.
        Only the ``source`` values of changed cells change, in the style found; magic lines
        get their own text back. Raises :class:`NotebookError` when a change cannot be put
        back into cells (it spans cells, or touches a magic line)."""
        old = self.module_lines()
        new = split_lines(fixed_module)
        owner = [i for i, cell in enumerate(self.cells) for _ in cell.python]
        out: list[list[str | int]] = [[] for _ in self.cells]  # per cell: new lines, or an old index
        for tag, i1, i2, j1, j2 in _opcodes(old, new):
            if tag == "equal":
                for k in range(i2 - i1):
                    out[owner[i1 + k]].append(i1 + k)
                continue
            cells = {owner[k] for k in range(i1, i2)}
            if tag == "insert":  # new lines join the cell of the line before (the first cell at the top)
                cells = {owner[i1 - 1] if i1 else 0}
            if any(self._is_magic(k, owner) for k in range(i1, i2)):
                raise NotebookError("a fix would change a line that holds a magic")
            if len(cells) > 1 and tag == "replace":  # each new line to the cell of the old line it rewrites
                for k, line in zip(_align(old[i1:i2], new[j1:j2]), new[j1:j2]):
                    out[owner[i1 + k]].append(line)
                continue
            for line in new[j1:j2]:
                out[min(cells)].append(line)
        changed = []
        for i, cell in enumerate(self.cells):
            base = self.starts[i] - 1
            if out[i] == list(range(base, base + len(cell.python))):
                continue
            lines = []
            own = [line if line.endswith(("\n", "\r")) else line + "\n" for line in split_lines(cell.source)]
            for item in out[i]:
                if isinstance(item, int):  # a line no fix changed: the cell's own text (its line end too)
                    lines.append(own[item - base])
                else:
                    lines.append(item)
            source = "".join(lines)
            if not cell.source.endswith(("\n", "\r")) and source.endswith("\n"):
                source = source[:-1]  # the line break the module added to the cell's last line
            if source != cell.source:
                changed.append((cell, source))
        return self.with_sources(changed), changed

    def _is_magic(self, k: int, owner: list[int]) -> bool:
        i = owner[k]
        return (k - (self.starts[i] - 1)) in self.cells[i].magic

    def with_sources(self, changes: list[tuple[Cell, str]]) -> str:
        """The JSON text with each (cell, source) of ``changes`` written in place of that
        cell's ``source`` value (the same style: a list of lines, its indentation, or one
        string; non-ASCII characters escaped only when the file escapes them). Raises
        :class:`NotebookError` when a cell's place in the text is unknown."""
        ascii_only = self.text.isascii() and bool(re.search(r"\\u[0-9a-fA-F]{4}", self.text))
        pieces, done = [], 0
        for cell, source in sorted(changes, key=lambda c: c[0].span or (0, 0)):
            if source == cell.source:
                continue
            if cell.span is None or cell.items is None:
                raise NotebookError(f"the source of cell {cell.index} was not found in the file's text")
            start, end = cell.span
            pieces += [self.text[done:start], _source_json(self.text, cell, source, ascii_only)]
            done = end
        return "".join(pieces) + self.text[done:]


def _opcodes(old: list[str], new: list[str]) -> list[tuple[str, int, int, int, int]]:
    """difflib's opcodes from ``old`` to ``new``, in about linear time for what fixes do
    (a few changed lines in a long module): lines that occur once in each are anchors (the
    longest run of them in the same order, as patience diff takes them), and only the gaps
    between anchors are compared by difflib (which is quadratic in a gap of repeated lines,
    such as one ``!pip install`` per cell)."""
    counts_old: dict[str, int] = {}
    counts_new: dict[str, int] = {}
    for line in old:
        counts_old[line] = counts_old.get(line, 0) + 1
    where_new = {}
    for j, line in enumerate(new):
        counts_new[line] = counts_new.get(line, 0) + 1
        where_new[line] = j
    pairs = [(i, where_new[line]) for i, line in enumerate(old)
             if counts_old[line] == 1 and counts_new.get(line) == 1]
    anchors = _increasing(pairs) + [(len(old), len(new))]
    out: list[tuple[str, int, int, int, int]] = []
    i0 = j0 = 0
    for i1, j1 in anchors:
        if i1 > i0 or j1 > j0:
            small = (i1 - i0) * (j1 - j0) <= _ALIGN_LIMIT * 4
            matcher = difflib.SequenceMatcher(None, old[i0:i1], new[j0:j1], autojunk=not small)
            out += [(tag, a1 + i0, a2 + i0, b1 + j0, b2 + j0) for tag, a1, a2, b1, b2 in matcher.get_opcodes()]
        if i1 < len(old):
            out.append(("equal", i1, i1 + 1, j1, j1 + 1))
        i0, j0 = i1 + 1, j1 + 1
    return out


def _increasing(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The longest run of ``pairs`` (sorted by their first item) whose second items increase
    (patience sorting, n log n)."""
    tops: list[int] = []  # per run length, the smallest second item ending such a run
    ends: list[int] = []  # per run length, the index in pairs of that pair
    back = [-1] * len(pairs)
    for k, (_, j) in enumerate(pairs):
        n = bisect.bisect_left(tops, j)
        if n == len(tops):
            tops.append(j)
            ends.append(k)
        else:
            tops[n], ends[n] = j, k
        back[k] = ends[n - 1] if n else -1
    out = []
    k = ends[-1] if ends else -1
    while k >= 0:
        out.append(pairs[k])
        k = back[k]
    return out[::-1]


#: the largest changed block (old lines x new lines) :func:`_align` compares line by line
_ALIGN_LIMIT = 4096


def _align(old: list[str], new: list[str]) -> list[int]:
    """For each line of ``new``, the index of the line of ``old`` it most likely rewrites:
    indexes in order (a later new line never goes to an earlier old line), the sum of
    similarities greatest (the earliest on ties). Line for line when the counts are equal.
    For a changed block that spans cells (a fix's hunk is a few lines: quadratic is fine)."""
    if len(old) == len(new):
        return list(range(len(old)))
    if len(old) * len(new) > _ALIGN_LIMIT:  # a huge block: spread it evenly, in linear time
        return [k * len(old) // len(new) for k in range(len(new))]
    strict = len(new) < len(old)  # fewer new lines: each old line takes one at most
    sim = [[difflib.SequenceMatcher(None, a, b, autojunk=False).ratio() for a in old] for b in new]
    # best[j][i]: the best sum for new[:j + 1] with new[j] on old[i]; back[j][i]: where new[j - 1] went
    best = [sim[0][:]]
    back = [[0] * len(old)]
    impossible = -float(len(new) + 1)
    for j in range(1, len(new)):
        row, links, top, top_i = [], [], impossible, 0
        for i in range(len(old)):
            if not strict and best[j - 1][i] > top:
                top, top_i = best[j - 1][i], i
            row.append(top + sim[j][i])
            links.append(top_i)
            if strict and best[j - 1][i] > top:
                top, top_i = best[j - 1][i], i
        best.append(row)
        back.append(links)
    i = max(range(len(old)), key=lambda k: (best[-1][k], -k))
    out = [i]
    for j in range(len(new) - 1, 0, -1):
        i = back[j][i]
        out.append(i)
    return out[::-1]


def _source_json(text: str, cell: Cell, source: str, ascii_only: bool) -> str:
    start, end = cell.span
    if text[start] == '"':
        return json.dumps(source, ensure_ascii=ascii_only)
    items = [json.dumps(line, ensure_ascii=ascii_only) for line in split_lines(source)]
    if not cell.items or "\n" not in text[start:end]:  # [] or ["a", "b"] on one line
        return "[" + ", ".join(items) + "]"
    first = cell.items[0][0]
    indent = text[text.rfind("\n", 0, first) + 1:first]
    close = text[text.rfind("\n", 0, end - 1) + 1:end - 1]
    if not items:
        return "[]"
    return "[\n" + ",\n".join(indent + item for item in items) + "\n" + close + "]"


class _CellMap:
    """Where each character of a cell's source is in the JSON text: the source's line starts,
    and per string of the ``source`` value the offset in the text of each decoded character
    (escapes take several)."""

    def __init__(self, text: str, cell: Cell) -> None:
        lines = split_lines(cell.source) or [""]
        self.line_starts = [0]
        for line in lines[:-1]:
            self.line_starts.append(self.line_starts[-1] + len(line))
        self.line_ends = [start + len(line.rstrip("\r\n")) for start, line in zip(self.line_starts, lines)]
        self.raw: list[int] = []  # the text offset of each decoded character, and one past the end
        for start, end in cell.items:
            self.raw += _offsets(text, start, end)
        self.raw.append(cell.items[-1][1] - 1)  # the closing quote of the last string

    def raw_offset(self, line: int, char_col: int) -> int:
        offset = min(self.line_starts[line - 1] + max(char_col - 1, 0), self.line_ends[line - 1])
        return self.raw[min(offset, len(self.raw) - 1)]


def _offsets(text: str, start: int, end: int) -> list[int]:
    """The offset in ``text`` of each decoded character of the JSON string at ``start``."""
    out = []
    i, stop = start + 1, end - 1
    while i < stop:
        out.append(i)
        if text[i] != "\\":
            i += 1
        elif text[i + 1] == "u":
            high, low = int(text[i + 2:i + 6], 16), text[i + 8:i + 12] if text[i + 6:i + 8] == "\\u" else ""
            pair = 0xD800 <= high < 0xDC00 and len(low) == 4 and 0xDC00 <= int(low, 16) < 0xE000
            i += 12 if pair else 6  # json decodes a surrogate pair as one character
        else:
            i += 2
    return out


# ---- the JSON text's structure: where each cell's source lies ----

class _Scanner:
    """Finds the offsets of values in JSON text (only what is asked for is walked into)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.decoder = json.JSONDecoder()

    def ws(self, i: int) -> int:
        while i < len(self.text) and self.text[i] in _WS:
            i += 1
        return i

    def skip(self, i: int) -> int:
        """The end of the value at ``i``."""
        return self.decoder.raw_decode(self.text, i)[1]

    def members(self, i: int):
        """(key, value start, value end) of the object at ``i``."""
        text = self.text
        i = self.ws(i + 1)
        while text[i] != "}":
            key, i = self.decoder.raw_decode(text, i)
            i = self.ws(self.ws(i) + 1)  # the colon
            end = self.skip(i)
            yield key, i, end
            i = self.ws(end)
            if text[i] == ",":
                i = self.ws(i + 1)

    def elements(self, i: int):
        """(start, end) of each element of the array at ``i``."""
        text = self.text
        i = self.ws(i + 1)
        while text[i] != "]":
            end = self.skip(i)
            yield i, end
            i = self.ws(end)
            if text[i] == ",":
                i = self.ws(i + 1)


def _source_spans(text: str) -> list[tuple[tuple[int, int], list[tuple[int, int]]] | None]:
    """Per cell of the notebook, in order: (span of the source value, spans of its strings),
    or None for a cell whose source is not a string or list of strings. nbformat 4 reads
    ``cells[].source``, nbformat 3 ``worksheets[].cells[].input`` / ``.source``."""
    scan = _Scanner(text)
    top = scan.ws(0)
    lists = []
    for key, start, _ in scan.members(top):
        if key == "cells" and text[start] == "[":
            lists.append((start, ("source",)))
        elif key == "worksheets" and text[start] == "[":
            for ws_start, _ in scan.elements(start):
                for k, s, _e in scan.members(ws_start):
                    if k == "cells" and text[s] == "[":
                        lists.append((s, ("input", "source")))
    out = []
    for start, keys in lists:
        for cell_start, _ in scan.elements(start):
            found = None
            if text[cell_start] == "{":
                for key, s, e in scan.members(cell_start):
                    if key in keys and found is None:
                        if text[s] == '"':
                            found = ((s, e), [(s, e)])
                        elif text[s] == "[":
                            items = list(scan.elements(s))
                            if all(text[a] == '"' for a, _ in items):
                                found = ((s, e), items)
            out.append(found)
    return out


# ---- reading ----

def _load(text: str) -> tuple[list[dict], dict]:
    """(cells as nbformat 4 dicts, notebook metadata) of the JSON ``text``."""
    try:
        import nbformat
    except ImportError:
        nbformat = None
    if nbformat is not None:
        log = logging.getLogger("traitlets")  # nbformat logs what it finds invalid while converting
        disabled, log.disabled = log.disabled, True
        try:
            with warnings.catch_warnings():  # a cell without an id (nbformat 4.5) is read all the same
                warnings.simplefilter("ignore")
                nb = nbformat.reads(text, as_version=4, capture_validation_error={})
        except Exception as exc:  # nbformat raises many kinds (JSON, version, schema)
            raise NotebookError(_one_line(exc)) from None
        finally:
            log.disabled = disabled
        if not isinstance(nb.get("metadata", {}), dict):
            raise NotebookError("its metadata is not an object")
        if not isinstance(nb.get("cells", []), list):
            raise NotebookError("no list of cells")
        return list(nb.get("cells", [])), dict(nb.get("metadata", {}))
    try:
        nb = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise NotebookError(f"not JSON: {_one_line(exc)}") from None
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        major = nb.get("nbformat") if isinstance(nb, dict) else None
        if isinstance(major, int) and major < 4:
            raise NotebookError(f"nbformat {major} notebook: reading it needs nbformat "
                                "(pip install 'flake8-xla[notebook]')")
        raise NotebookError("no list of cells")
    return nb["cells"], nb.get("metadata") if isinstance(nb.get("metadata"), dict) else {}


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:200]


def _cell_source(cell: dict) -> str | None:
    source = cell.get("source", "")
    if isinstance(source, list) and all(isinstance(s, str) for s in source):
        return "".join(source)
    return source if isinstance(source, str) else None


def is_python(metadata: dict) -> bool:
    """False for a notebook whose kernel says another language (R, Julia...)."""
    for key, sub in (("language_info", "name"), ("kernelspec", "language")):
        value = metadata.get(key)
        if isinstance(value, dict) and isinstance(value.get(sub), str):
            return value[sub].lower() in ("python", "python3", "ipython", "ipython3")
    return True


def parse(text: str) -> Notebook:
    """The notebook in JSON ``text``. Raises :class:`NotebookError` (why, one line) when it
    is not a notebook. A notebook whose kernel is not Python has no cells to lint."""
    cells, metadata = _load(text)
    try:
        spans = _source_spans(text)
    except (ValueError, IndexError, RecursionError):
        spans = []
    if len(spans) != len(cells):
        spans = [None] * len(cells)
    out = []
    if not is_python(metadata):
        return Notebook(text, [])
    for index, (cell, span) in enumerate(zip(cells, spans), start=1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = _cell_source(cell)
        if source is None:
            continue
        converted = cell_python(source)
        if converted is None:
            continue
        python, magic, shift = converted
        if span is not None and "".join(json.loads(text[a:b]) for a, b in span[1]) != source:
            span = None  # nbformat changed it on the way: edits and raw positions are unknown
        out.append(Cell(index, source, python, magic, shift, *(span or (None, None))))
    return Notebook(text, out)


# ---- magics ----

def _transformer():
    try:
        from IPython.core.inputtransformer2 import TransformerManager
    except Exception:  # not installed, or broken: the fallback rule
        return None
    return TransformerManager()


def cell_python(source: str, transformer="auto") -> tuple[list[str], set[int], list[int]] | None:
    """The Python a code cell runs, as (lines, numbers of the magic lines, per line the
    characters dropped from its start), one line per line of ``source``; None when a cell
    magic runs the cell as something else (``%%bash``). ``transformer``: IPython's
    ``TransformerManager`` (``"auto"``: when importable; ``None``: the fallback rule)."""
    lines = split_lines(source)
    if lines and not lines[-1].endswith(("\n", "\r")):
        lines[-1] += "\n"
    lines = [line.rstrip("\r\n") + "\n" for line in lines]
    magic: set[int] = set()
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is not None and lines[first].lstrip().startswith("%%"):
        name = lines[first].lstrip()[2:].split(None, 1)
        if not name or name[0] not in PYTHON_CELL_MAGICS:
            return None
        indent = len(lines[first]) - len(lines[first].lstrip())
        lines[first] = lines[first][:indent] + "#" + lines[first][indent + 1:]
        magic.add(first)
    if transformer == "auto":
        transformer = _transformer()
    if transformer is not None:
        try:
            out = split_lines(transformer.transform_cell("".join(lines)))
        except Exception:  # IPython's own errors on odd input: the fallback rule
            out = None
        if out is not None and len(out) == len(lines):
            shift = []
            for k, (old, new) in enumerate(zip(lines, out)):
                if old == new:
                    shift.append(0)
                elif old.endswith(new):  # indentation or a prompt removed
                    shift.append(len(old) - len(new))
                else:
                    magic.add(k)
                    shift.append(0)
            return out, magic, shift
    return _fallback(lines, magic), magic, [0] * len(lines)


def _fallback(lines: list[str], magic: set[int]) -> list[str]:
    """Ruff's rule: each magic or escape line (and the lines it continues onto with ``\\``)
    becomes ``...`` (after an assignment's target, ``x = ...``) padded to its length; a
    cell that parses as it is has none."""
    import ast

    text = "".join(lines)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(text)
        return lines
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        pass
    out = list(lines)
    continued = False
    for k, line in enumerate(lines):
        body = line.rstrip("\n")
        stripped = body.strip()
        if continued:
            out[k] = "\n"
            magic.add(k)
            continued = body.endswith("\\")
            continue
        if stripped.startswith(("%", "!", "?")) or (stripped.endswith("?") and not stripped.startswith("#")):
            indent = body[:len(body) - len(body.lstrip())]
            out[k] = (indent + "...").ljust(len(body)) + "\n"
            magic.add(k)
        else:
            m = _ASSIGN_MAGIC.match(body)
            if m is None:
                continue
            out[k] = (m.group(1) + "...").ljust(len(body)) + "\n"
            magic.add(k)
        continued = body.endswith("\\")  # a magic line continued onto the next
    return out


__all__ = ["Cell", "Notebook", "NotebookError", "PYTHON_CELL_MAGICS", "cell_python", "is_notebook", "parse"]
