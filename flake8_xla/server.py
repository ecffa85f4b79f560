"""The language server: ``flake8-xla server`` or ``python -m flake8_xla.server``.

The Language Server Protocol over standard input and output, on pygls 2 and lsprotocol (the
``lsp`` extra: ``pip install 'flake8-xla[lsp]'``; the quick fixes also need LibCST, which
that extra brings). What it does:

- Diagnostics for each open Python document (``languageId`` ``python``, or a ``.py`` /
  ``.pyi`` path) on open and save, and on change after a pause in typing (:data:`DEBOUNCE`
  seconds), from the buffer's text, never the file on disk. A document with a file path is
  linted in project mode as the CLI lints the file (its project's other modules as saved on
  disk). ``code`` is the rule's code, ``codeDescription.href`` its page (this release's
  page, or where ``xla-docs-url`` says), the severity the rule's (E: Error, W and C: Warning, with the
  ``Deprecated`` tag for C; the hints: Hint), ``source`` ``flake8-xla``. A buffer that does
  not parse gets ``E999`` on its line, as the CLI reports it.
- Code actions on a finding: *Fix XLAnnn* (the fix ``flake8-xla --fix`` would make for that
  finding alone, verified the same way); a rule whose fix is unsafe offers it as
  *Fix XLAnnn (unsafe: ...)*, never preferred and never part of *fix all*: it is applied only
  by picking it on its own finding. *Add ``# noqa: XLAnnn``* on the finding's line (merged
  into a ``# noqa: CODES`` already there; offered only when the comment can go there and
  makes flake8 drop the finding). For the whole file, the ``source.fixAll.flake8-xla``
  action (every safe fix, as ``flake8-xla --fix``) and the command ``flake8-xla.fixAll``
  (argument: the document's URI, or ``{"uri": ..., "version": ...}``), which sends the edit
  with ``workspace/applyEdit``.
- Every edit names the document version it was computed from; a document that changed
  since its last lint gets no action, and the client refuses an edit for another version.
- Settings: the project's configuration files as the CLI reads them (``[flake8]``,
  ``[tool.flake8-xla]``), found from the document's folder, overlaid with the client's: the
  keys of ``[tool.flake8-xla]`` (``select``, ``extend-select``, ``ignore``,
  ``extend-ignore``, ``per-file-ignores``, ``exclude``, ``extend-exclude``, ``xla-scope``,
  ``xla-version``, ``xla-reducing-calls``, ``xla-launchers``, ``xla-docs-url``,
  ``xla-project``) plus ``config`` (read only this file) and ``isolated`` (read none), from
  ``initializationOptions`` and ``workspace/didChangeConfiguration`` (the object itself, or
  its ``flake8-xla`` member; the latest ``didChangeConfiguration`` goes over the
  ``initializationOptions``, key by key). Patterns and a relative ``config`` path are
  relative to the workspace folder holding the document (else the workspace root);
  ``exit-zero``, ``format`` and ``respect-gitignore`` are accepted and mean nothing here. A document that ``exclude`` matches (or a folder above it, inside the
  workspace) gets no diagnostics. A bad value is one error diagnostic on line 1 of each
  document it affects.
- Notebook documents (``notebookDocument/*``, for clients that send them): the code cells
  are linted as one module (:func:`notebook_module`: a name defined in one cell is known in
  the next; magics and shell lines are not Python and are left out), each finding published
  on its cell. The actions work there too, as long as each edit stays in one cell and
  leaves the magics alone; while a notebook has magics, a fix that removes an import is
  not offered (a magic's arguments may use the name).

Text is synchronised whole (``TextDocumentSyncKind.Full``): the server never applies
incremental edits itself (pygls splits lines with ``str.splitlines``, which also breaks at a
form feed or U+2028, where the protocol does not), so its copy cannot drift from the editor's.
All linting and fixing runs on one worker thread, one job at a time, off the thread that
reads the messages.
"""

from __future__ import annotations

import ast
import asyncio
import concurrent.futures
import dataclasses
import difflib
import logging
import os
import re
import sys
import warnings
from pathlib import Path
from typing import Any, Callable, Iterable

from .cli import config as cfg
from .cli.files import DEFAULT_EXCLUDE, Result, matches
from .cli.select import Selector
from .lines import split_lines, universal_lines
from .notebook import is_notebook
from .settings import OPTIONS, SettingsError, Settings, from_options

SOURCE = "flake8-xla"
#: the code action kind of "every safe fix in the file" (``editor.codeActionsOnSave``)
FIX_ALL_KIND = "source.fixAll.flake8-xla"
FIX_ALL_COMMAND = "flake8-xla.fixAll"
#: seconds without a change before a changed document is linted again
DEBOUNCE = 0.3
#: codes that are not findings of a rule: no fix and no ``# noqa`` action
NOT_RULES = ("E902", "E999", "XLA000")
#: the client setting keys besides those of ``[tool.flake8-xla]``
CLIENT_ONLY_KEYS = ("config", "isolated")
LSP_COMMAND = "pip install 'flake8-xla[lsp]'"

_LOG = logging.getLogger(__name__)


# -- settings ----------------------------------------------------------------------------


def client_values(raw: object) -> tuple[dict[str, object], list[str]]:
    """The client's settings (``initializationOptions`` or ``didChangeConfiguration``'s
    ``settings``: the object itself or its ``flake8-xla`` member) as ``{key: value}`` with
    the CLI's key names (``xla_scope`` and ``xlaScope`` become ``xla-scope``), and one line per
    key dropped (unknown, or of the wrong type). Never raises."""
    if not isinstance(raw, dict):
        return {}, [] if raw is None else [f"settings: expected an object, got {type(raw).__name__}"]
    for name in ("flake8-xla", "flake8_xla", "flake8Xla"):
        if isinstance(raw.get(name), dict):
            raw = raw[name]
            break
    known = set(cfg.TOML_TYPES) | set(CLIENT_ONLY_KEYS)
    values, problems = {}, []
    for key, value in raw.items():
        norm = re.sub(r"(?<=[a-z])([A-Z])", r"-\1", str(key)).lower().replace("_", "-").strip()
        if norm not in known:
            problems.append(f"unknown setting {key!r} (known: {', '.join(sorted(known))})")
            continue
        if value is None:
            continue
        if norm == "config":
            problem = None if isinstance(value, str) else f"config: expected a string, got {cfg._type_name(value)}"
        elif norm == "isolated":
            problem = None if isinstance(value, bool) else f"isolated: expected true or false, got {cfg._type_name(value)}"
        else:
            problem = cfg.type_error(norm, value)
        if problem is not None:
            problems.append(problem)
            continue
        values[norm] = value
    return values, problems


@dataclasses.dataclass
class Resolved:
    """What linting one document is asked to do: the settings, which codes are reported,
    whether the document is excluded, or the one-line ``error`` of a configuration that cannot be used (then nothing else is set)."""

    settings: Settings | None = None
    selector: Selector | None = None
    excluded: bool = False
    error: str | None = None


def resolve(path: str | None, client: dict[str, object], root: Path | None) -> Resolved:
    """The configuration of the document at ``path`` (None: an unsaved buffer): the
    configuration files found from its folder (as the CLI run from there finds them),
    overlaid with the ``client`` settings (:func:`client_values`), whose patterns are relative
    to the workspace ``root`` (the document's folder without one). Never raises: a value
    that cannot be used is :attr:`Resolved.error`."""
    folder = Path(path).parent if path else (root or Path.cwd())
    base = root or folder
    try:
        config_file = client.get("config")
        config = cfg.load(base / str(config_file) if config_file else None,
                          isolated=bool(client.get("isolated")), cwd=folder)

        def pick(key: str):
            if key in client:
                return client[key], base, f"client setting {key}"
            return config.get(key), config.base(key), config.label(key)

        settings = from_options({opt.name: pick(opt.name)[0] for opt in OPTIONS},
                                {opt.name: pick(opt.name)[2] for opt in OPTIONS})
        value, where, _ = pick("exclude")
        exclude = cfg.as_patterns(value, where) if value is not None else list(DEFAULT_EXCLUDE)
        exclude += cfg.as_patterns(*pick("extend-exclude")[:2])
        pfi, pfi_base, pfi_label = pick("per-file-ignores")
        selector = Selector(
            select=cfg.as_codes(pick("select")[0]), ignore=cfg.as_codes(pick("ignore")[0]),
            extend_select=cfg.as_codes(pick("extend-select")[0]) or [],
            extend_ignore=cfg.as_codes(pick("extend-ignore")[0]) or [],
            per_file_ignores=cfg.as_per_file_ignores(pfi, pfi_base, pfi_label),
        )
        settings = dataclasses.replace(settings, unreported=selector.unreported())  # as the CLI
    except SettingsError as exc:
        return Resolved(error=str(exc))
    except Exception as exc:  # never let a configuration stop the server
        return Resolved(error=f"cannot read the configuration ({type(exc).__name__}: {exc})")
    return Resolved(settings, selector, bool(path) and _excluded(Path(path), exclude, root))


def _excluded(path: Path, exclude: list[str], root: Path | None) -> bool:
    """Would the CLI skip ``path``: it matches ``exclude``, or (inside ``root``) a folder
    above it does, as a walk of the root would skip it."""
    if matches(str(path), exclude):
        return True
    if root is None:
        return False
    for folder in path.parents:
        if folder == root or root not in folder.parents:
            break
        if matches(str(folder), exclude):
            return True
    return False


# -- positions ---------------------------------------------------------------------------


def client_units(text: str, encoding: str) -> int:
    """The length of ``text`` in the client's position encoding (``utf-16``, the default;
    ``utf-8``; ``utf-32``: code points)."""
    if encoding == "utf-8":
        return len(text.encode("utf-8", errors="surrogatepass"))
    if encoding == "utf-32":
        return len(text)
    return len(text.encode("utf-16-le", errors="surrogatepass")) // 2


def _content(line: str) -> str:
    return line.rstrip("\r\n")


def _chars(line: str, byte_col: int) -> int:
    """Code points of ``line`` before UTF-8 byte ``byte_col`` (a position ast gives)."""
    return len(line.encode("utf-8", errors="surrogatepass")[:max(byte_col, 0)].decode("utf-8", errors="ignore"))


def finding_range(lines: list[str], r: Result) -> tuple[tuple[int, int], tuple[int, int]]:
    """((line, char), (line, char)), 0-based, in code points, of a reported finding in the
    document whose :func:`~flake8_xla.lines.split_lines` are ``lines``: from the finding's
    column to its node's end, cut at the end of the first line (a finding on a loop or a
    call that spans lines marks the line it is reported on, not the whole block). ``E999`` /
    ``E902`` mark their whole line."""
    line0 = min(max(r.line - 1, 0), max(len(lines) - 1, 0))
    text = _content(lines[line0]) if lines else ""
    if r.code in ("E999", "E902"):
        return (line0, 0), (line0, len(text))
    start = min(_chars(text, r.col - 1), len(text))
    if r.end_line == r.line and r.end_col is not None:
        end = min(_chars(text, r.end_col - 1), len(text))
    else:
        end = len(text.rstrip())
    return (line0, start), (line0, max(end, start))


def text_edits(old: str, new: str) -> list[tuple[tuple[int, int], tuple[int, int], str]]:
    """The edits that turn ``old`` into ``new``, as ((line, char), (line, char), text) with
    0-based lines of ``old`` and code points: one per run of changed lines (whole lines
    replaced; the editor keeps everything else, and the cursor where nothing changed)."""
    piece = Piece("", None, 0, split_lines(old))
    return [(start, end, text) for _, start, end, text in piece_edits(old, new, [piece], frozenset())]


@dataclasses.dataclass
class Piece:
    """One document of what is linted as one module: a text document (the whole module), or
    a code cell of a notebook. ``start``: its first line in the module (0-based); ``lines``:
    its own text's lines (:func:`~flake8_xla.lines.split_lines`); ``newline_added``: the
    module has a line end after its last line that its text lacks."""

    uri: str
    version: int | None
    start: int
    lines: list[str]
    newline_added: bool = False

    @property
    def end(self) -> int:
        return self.start + len(self.lines)


#: a line IPython runs as a line magic or a shell command (``%pip install x``, ``!ls``)
_MAGIC_LINE = re.compile(r"^[ \t]*[%!]")
#: cell magics whose body is Python that runs in the notebook's namespace
PYTHON_CELL_MAGICS = ("time", "timeit", "capture")
_IMPORT_LINE = re.compile(r"^[ \t]*(import|from)[ \t]")


def notebook_module(cells: list[tuple[str, int | None, str]]) -> tuple[str, list[Piece], frozenset[int]]:
    """The code cells ``(uri, version, text)`` of a notebook as one module: (its text, one
    :class:`Piece` per cell, the module lines that are not the cells' text). A cell that
    starts with a cell magic is blank lines (``%%bash``, ``%%writefile``), except for the
    magics whose body is Python (:data:`PYTHON_CELL_MAGICS`: ``%%time``...), where only the
    magic's line is; a line magic or shell line (``%pip ...``, ``!nvidia-smi``) is ``pass``
    at its indentation. Each cell keeps its line count, so a finding's line is its cell's."""
    parts, pieces, masked = [], [], set()
    line = 0
    for uri, version, text in cells:
        lines = split_lines(text)
        added = bool(lines) and not lines[-1].endswith(("\n", "\r"))
        out = [ln if ln.endswith(("\n", "\r")) else ln + "\n" for ln in lines]
        magic = re.match(r"[ \t]*%%(\w*)", lines[0]) if lines else None
        for i, ln in enumerate(out):
            if magic and (i == 0 or magic.group(1) not in PYTHON_CELL_MAGICS):
                out[i] = "\n"
                masked.add(line + i)
            elif _MAGIC_LINE.match(ln):
                out[i] = ln[:len(ln) - len(ln.lstrip(" \t"))] + "pass\n"
                masked.add(line + i)
        parts.append("".join(out))
        pieces.append(Piece(uri, version, line, lines, added))
        line += len(lines)
    return "".join(parts), pieces, frozenset(masked)


def locate(pieces: list[Piece], line0: int) -> tuple[int, int]:
    """(index of the piece, line in it) of module line ``line0`` (the last line of the last
    piece when past the end)."""
    for i, piece in enumerate(pieces):
        if piece.start <= line0 < piece.end:
            return i, line0 - piece.start
    last = len(pieces) - 1
    return last, max(len(pieces[last].lines) - 1, 0)


def piece_edits(old: str, new: str, pieces: list[Piece], masked: frozenset[int]
                ) -> list[tuple[int, tuple[int, int], tuple[int, int], str]] | None:
    """The edits that turn the module ``old`` into ``new``, per piece: (index of the piece,
    (line, char), (line, char), text) in the piece's own lines and code points, one per run
    of changed lines; None when a run spans two pieces or touches a masked line (a magic),
    so that no edit can land in the wrong cell, and when there are masked lines and an
    import line goes (a magic's arguments, which the lint does not see, may use its name)."""
    a, b = split_lines(old), split_lines(new)
    out = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        if any(i in masked for i in range(i1, i2)):
            return None
        if masked and {ln for ln in a[i1:i2] if _IMPORT_LINE.match(ln)} - set(b[j1:j2]):
            return None
        if i1 < i2:
            index = next((k for k, p in enumerate(pieces) if p.start <= i1 < p.end), None)
            if index is None or i2 > pieces[index].end:
                return None
        else:  # an insertion goes to the start of the piece it precedes, else the end of the last one
            index = next((k for k, p in enumerate(pieces) if p.start <= i1 < p.end), len(pieces) - 1)
        piece = pieces[index]
        text = "".join(b[j1:j2])
        if i1 == i2 == piece.end and piece.newline_added:  # lines added after a cell's last line
            if not text.endswith("\n"):
                return None
            last = (len(piece.lines) - 1, len(piece.lines[-1]))
            out.append((index, last, last, "\n" + text[:-1]))
            continue
        if i2 == piece.end and (piece.newline_added or (piece.lines and not piece.lines[-1].endswith(("\n", "\r")))):
            # the run ends with the piece's last line, which has no line end of its own
            if piece.newline_added:
                if text and not text.endswith("\n"):
                    return None
                text = text[:-1] if text else text
            end = (len(piece.lines) - 1, len(piece.lines[-1]))
        else:
            end = (i2 - piece.start, 0)
        out.append((index, (i1 - piece.start, 0), end, text))
    return out


# -- noqa --------------------------------------------------------------------------------


class _ProcessorOptions:
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return {"hang_closing": False, "indent_size": 4, "max_line_length": 79, "disable_noqa": False,
                "verbose": 0}.get(name)


def suppressed(text: str, line: int, code: str) -> bool:
    """Does flake8's ``# noqa`` drop ``code`` on ``line`` (1-based) of ``text``? False when
    flake8 cannot tokenize the text."""
    from flake8.processor import FileProcessor
    from flake8.violation import Violation

    try:
        processor = FileProcessor("-", _ProcessorOptions(), lines=universal_lines(text))
        logical = processor.noqa_line_for(line)
    except Exception:
        return False
    return logical is not None and Violation(code, "-", line, 1, "", logical).is_inline_ignored(False)


def noqa_edit(text: str, line: int, code: str) -> tuple[int, int, int, str] | None:
    """Where ``# noqa: CODE`` goes for a finding of ``code`` on ``line`` (1-based): (0-based
    line, first char, last char, text) replacing those characters, or None when no place
    works. An existing ``# noqa: CODES`` on the line gets ``,CODE`` (a bare ``# noqa`` is
    never narrowed); otherwise ``  # noqa: CODE`` ends the line (its trailing blanks
    dropped). A line that cannot take a comment (inside a string, after a ``\\``) passes to
    the next line of the same statement. Each place is checked: the module parses to the
    same tree and flake8's ``# noqa`` now drops the finding."""
    from flake8.defaults import NOQA_INLINE_REGEXP

    lines = split_lines(text)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.dump(ast.parse(text))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    for cand in range(line, min(len(lines), line + 50) + 1):
        raw = lines[cand - 1]
        content = _content(raw)
        found = NOQA_INLINE_REGEXP.search(content)
        if found and not found.group("codes"):
            continue
        if found:
            codes = found.group("codes")
            start = stop = found.start("codes") + len(codes.rstrip(", \t"))
            new = (", " if re.search(r",\s", codes) else ",") + code
        else:
            start, stop, new = len(content.rstrip(" \t\x0c")), len(content), "  # noqa: " + code
        changed = "".join(lines[:cand - 1]) + content[:start] + new + content[stop:] + raw[len(content):] + \
            "".join(lines[cand:])
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                same = ast.dump(ast.parse(changed)) == tree
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            same = False
        if same and suppressed(changed, line, code):
            return cand - 1, start, stop, new
    return None


# -- linting and fixing ------------------------------------------------------------------


def lint_text(text: str, path: str | None, resolved: Resolved) -> list[Result]:
    """The reported findings of the buffer ``text`` of the document at ``path`` (None:
    unsaved; linted alone), as the CLI reports them for that file (``# noqa``, the selection,
    per-file-ignores), sorted by position. Never raises."""
    from .cli.files import lint

    if resolved.error or resolved.excluded:
        return []
    display = path or "untitled"
    # a text document is linted as the text it is, even under a notebook's name: its
    # positions are the document's (notebooks come as notebook documents, cell by cell)
    filename = None if is_notebook(path) else path
    found = lint(display, resolved.settings, universal_lines(text), filename=filename)
    return sorted((r for r in found if resolved.selector.reported(display, r.code)),
                  key=lambda r: (r.line, r.col, r.code))


def fixed_text(text: str, path: str | None, resolved: Resolved, unsafe: bool = False,
               only: Callable | None = None) -> str | None:
    """``text`` with the fixes of ``flake8-xla --fix`` applied (``unsafe``: the unsafe ones
    too; ``only``: a predicate on the findings to fix), or None when nothing changes, the
    fixes were reverted or LibCST is missing. Never raises."""
    if resolved.error or resolved.excluded:
        return None
    try:
        from .fix import fixer
    except ImportError:
        return None
    display = path or "untitled"
    try:
        result = fixer.fix_source(text, resolved.settings, path=display, unsafe=unsafe,
                                  is_selected=lambda code: resolved.selector.reported(display, code),
                                  filename=None if is_notebook(path) else path, only=only)
    except Exception:  # pragma: no cover - fix_source never raises on odd input
        _LOG.exception("fixing %s", display)
        return None
    if result.source == text:  # (fixes rolled back alone: the verified rest still applies)
        return None
    return result.source


def finding_key(r: Result) -> list:
    """What a diagnostic's ``data`` holds to find its finding again: [line, 0-based byte
    column, code], as the engine reports it."""
    return [r.line, r.col - 1, r.code]


# -- the server --------------------------------------------------------------------------


def _severity(code: str, settings: Settings | None):
    from lsprotocol import types as lsp

    from .registry import all_rules

    cls = all_rules().get(code)
    if cls is None:
        return lsp.DiagnosticSeverity.Error, None
    if getattr(cls, "hint", False):
        return lsp.DiagnosticSeverity.Hint, None
    letter = cls.severity_for(settings.target_version if settings else (99, 99))
    if letter == "E":
        return lsp.DiagnosticSeverity.Error, None
    return lsp.DiagnosticSeverity.Warning, [lsp.DiagnosticTag.Deprecated] if letter == "C" else None


@dataclasses.dataclass
class _State:
    """One linted target (a text document, or a notebook's code cells as one module): the
    version linted (the notebook's for a notebook), the module text, its pieces, the module
    lines that are not the cells' text, and what the lint found."""

    version: int | None
    text: str
    pieces: list[Piece]
    masked: frozenset[int]
    results: list[Result]
    resolved: Resolved
    #: fixed texts and ``# noqa`` places computed for this version (an editor asks again at
    #: each cursor move)
    cache: dict = dataclasses.field(default_factory=dict)


class _Answered:
    """A request already answered with an error while it was read (see :func:`_protocol_class`)."""

    jsonrpc = None


def _protocol_class():
    """pygls's protocol, answering a request whose parameters do not validate (a code
    action with ``range: null``) with JSON-RPC's error reply (``InvalidParams``, -32602, or
    ``InternalError``) under its id. pygls raises while it reads the message, before it knows
    the id, so the request got no answer at all and the editor waited on it."""
    from pygls.exceptions import JsonRpcException, JsonRpcInternalError
    from pygls.protocol import LanguageServerProtocol

    class Protocol(LanguageServerProtocol):
        def structure_message(self, data):
            try:
                return super().structure_message(data)
            except Exception as exc:
                if not (isinstance(data, dict) and "method" in data and isinstance(data.get("id"), (int, str))):
                    raise  # a notification or a response: nobody waits on an answer
                error = exc if isinstance(exc, JsonRpcException) else JsonRpcInternalError()
                self._send_response(data["id"], error=error.to_response_error())
                return _Answered()

        def handle_message(self, message):
            if isinstance(message, _Answered):
                return None
            return super().handle_message(message)

    return Protocol


def build_server():
    """The pygls ``LanguageServer`` with every handler registered (not started)."""
    from lsprotocol import types as lsp
    from pygls.lsp.server import LanguageServer

    from . import __version__
    from .fix import SAFE, UNSAFE, applicability
    from .registry import doc_url

    server = LanguageServer(
        SOURCE, __version__, protocol_cls=_protocol_class(), text_document_sync_kind=lsp.TextDocumentSyncKind.Full,
        notebook_document_sync=lsp.NotebookDocumentSyncOptions(notebook_selector=[
            lsp.NotebookDocumentFilterWithCells(cells=[lsp.NotebookCellLanguage(language="python")],
                                                notebook="*")], save=True))
    executor = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="flake8-xla")
    client: dict[str, object] = {}
    layers: dict[str, dict[str, object]] = {"init": {}, "config": {}}
    states: dict[str, _State] = {}  # by the text document's or the notebook's URI
    published: dict[str, list[str]] = {}  # target URI -> the URIs its last diagnostics went to
    pending: dict[str, asyncio.Task] = {}
    open_docs: set[str] = set()
    notebooks: set[str] = set()
    shown: set[str] = set()

    def encoding() -> str:
        enc = server.workspace.position_encoding
        return str(getattr(enc, "value", enc) or "utf-16")

    def root(path: str | None = None) -> Path | None:
        """The workspace folder holding ``path`` (the deepest one), else the workspace root."""
        from pygls.uris import to_fs_path

        folders = [Path(p).resolve() for p in (to_fs_path(f.uri) for f in server.workspace.folders.values()) if p]
        if path is not None:
            inside = [f for f in folders if f in Path(path).parents]
            if inside:
                return max(inside, key=lambda f: len(f.parts))
        top = server.workspace.root_path
        return Path(top).resolve() if top else None

    def path_of(uri: str) -> str | None:
        from pygls.uris import to_fs_path

        if not uri.startswith("file:"):
            return None
        path = to_fs_path(uri)
        return os.path.abspath(path) if path else None

    def position(lines: list[str], line: int, char: int):
        text = _content(lines[line]) if 0 <= line < len(lines) else ""
        return lsp.Position(line=line, character=client_units(text[:char], encoding()))

    def lsp_range(lines, start, end):
        return lsp.Range(start=position(lines, *start), end=position(lines, *end))

    def warn(message: str, kind=None) -> None:
        if message in shown:
            return
        shown.add(message)
        server.window_show_message(lsp.ShowMessageParams(type=kind or lsp.MessageType.Warning,
                                                         message=f"flake8-xla: {message}"))

    def set_client(raw: object, layer: str) -> None:
        """``initializationOptions`` (``init``) stay; each ``didChangeConfiguration``
        (``config``) replaces the last one's values, key by key over them."""
        values, problems = client_values(raw)
        layers[layer] = values
        client.clear()
        client.update({**layers["init"], **layers["config"]})
        for problem in problems:
            warn(f"client settings: {problem}")

    def is_python(uri: str) -> bool:
        doc = server.workspace.get_text_document(uri)
        return doc.language_id == "python" or (path_of(uri) or uri).endswith((".py", ".pyi"))

    def target_of(uri: str) -> str:
        """The linted target a URI belongs to: a cell's notebook, else itself."""
        if uri in notebooks:
            return uri
        nb = server.workspace.get_notebook_document(cell_uri=uri)
        return nb.uri if nb is not None and nb.uri in notebooks else uri

    def snapshot(uri: str) -> tuple[int | None, str, list[Piece], frozenset[int]]:
        """(version, module text, pieces, masked lines) of a target as the editor has it now."""
        if uri in notebooks:
            nb = server.workspace.get_notebook_document(notebook_uri=uri)
            cells = []
            for cell in nb.cells:
                if cell.kind != lsp.NotebookCellKind.Code:
                    continue
                doc = server.workspace.get_text_document(cell.document)
                if doc.language_id not in (None, "python"):
                    continue
                cells.append((cell.document, doc.version, doc.source))
            text, pieces, masked = notebook_module(cells)
            return nb.version, text, pieces, masked
        doc = server.workspace.get_text_document(uri)
        text = doc.source
        return doc.version, text, [Piece(uri, doc.version, 0, split_lines(text))], frozenset()

    def diagnostics(state: _State) -> dict[str, list]:
        """The diagnostics of each piece of a linted target."""
        out: dict[str, list] = {piece.uri: [] for piece in state.pieces}
        if not state.pieces:
            return out
        if state.resolved.error:
            first = state.pieces[0]
            out[first.uri].append(lsp.Diagnostic(
                range=lsp_range(first.lines, (0, 0), (0, 0)), severity=lsp.DiagnosticSeverity.Error, source=SOURCE,
                message=f"configuration error: {state.resolved.error}; no flake8-xla rule ran"))
            return out
        module_lines = split_lines(state.text)
        for r in state.results:
            (line0, c0), (_, c1) = finding_range(module_lines, r)
            index, local = locate(state.pieces, line0)
            piece = state.pieces[index]
            severity, tags = _severity(r.code, state.resolved.settings)
            href = doc_url(r.code, state.resolved.settings) if r.code not in NOT_RULES else None
            out[piece.uri].append(lsp.Diagnostic(
                range=lsp_range(piece.lines, (local, c0), (local, c1)), message=r.message, severity=severity,
                code=r.code, code_description=lsp.CodeDescription(href=href) if href else None, source=SOURCE,
                tags=tags, data={"key": finding_key(r), "fix": applicability(r.code), "version": piece.version}))
        return out

    def publish(uri: str, state: _State | None) -> None:
        """Publish a target's diagnostics (none: clear what was published for it)."""
        by_uri = diagnostics(state) if state is not None else {}
        for gone in published.pop(uri, []):
            by_uri.setdefault(gone, [])
        if state is not None:
            published[uri] = [piece.uri for piece in state.pieces]
        versions = {piece.uri: piece.version for piece in state.pieces} if state is not None else {}
        for target, diags in by_uri.items():
            server.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(
                uri=target, version=versions.get(target), diagnostics=diags))

    async def lint_now(uri: str) -> None:
        if uri not in open_docs and uri not in notebooks:
            return
        version, text, pieces, masked = snapshot(uri)
        path = path_of(uri)
        loop = asyncio.get_running_loop()

        def work() -> _State:
            resolved = resolve(path, dict(client), root(path))
            try:
                results = lint_text(text, path, resolved)
            except Exception as exc:  # never stop the server for one document
                _LOG.exception("linting %s", uri)
                resolved = Resolved(error=f"internal error ({type(exc).__name__}); please report")
                results = []
            return _State(version, text, pieces, masked, results, resolved)

        state = await loop.run_in_executor(executor, work)
        if (uri not in open_docs and uri not in notebooks) or snapshot(uri)[0] != version:
            return  # closed, or changed meanwhile: its own lint is on the way
        states[uri] = state
        publish(uri, state)

    def schedule(uri: str, delay: float = 0.0) -> None:
        old = pending.pop(uri, None)
        if old is not None:
            old.cancel()

        async def later():
            if delay:
                await asyncio.sleep(delay)
            await lint_now(uri)

        task = asyncio.get_running_loop().create_task(later())
        pending[uri] = task
        task.add_done_callback(lambda t: pending.pop(uri, None) if pending.get(uri) is t else None)

    def relint_all() -> None:
        for uri in sorted(open_docs | notebooks):
            schedule(uri)

    def forget(uri: str) -> None:
        open_docs.discard(uri)
        notebooks.discard(uri)
        states.pop(uri, None)
        task = pending.pop(uri, None)
        if task is not None:
            task.cancel()
        publish(uri, None)

    @server.feature(lsp.INITIALIZE)
    def initialize(params: lsp.InitializeParams) -> None:
        set_client(params.initialization_options, "init")

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(params: lsp.DidOpenTextDocumentParams) -> None:
        uri = params.text_document.uri
        if target_of(uri) == uri and is_python(uri):  # a notebook's cell is linted with its notebook
            open_docs.add(uri)
            schedule(uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(params: lsp.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        if uri in open_docs:
            states.pop(uri, None)  # its diagnostics no longer match the text: no action until the next lint
            schedule(uri, DEBOUNCE)

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    def did_save(params: lsp.DidSaveTextDocumentParams) -> None:
        from .project import clear_cache

        clear_cache()  # project mode reads the saved modules again
        # every open document: the saved file may be a configuration file, or a module
        # the others' project facts come from
        relint_all()

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(params: lsp.DidCloseTextDocumentParams) -> None:
        if params.text_document.uri in open_docs:
            forget(params.text_document.uri)

    @server.feature(lsp.NOTEBOOK_DOCUMENT_DID_OPEN)
    def notebook_open(params: lsp.DidOpenNotebookDocumentParams) -> None:
        uri = params.notebook_document.uri
        notebooks.add(uri)
        schedule(uri)

    @server.feature(lsp.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def notebook_change(params: lsp.DidChangeNotebookDocumentParams) -> None:
        uri = params.notebook_document.uri
        if uri in notebooks:
            states.pop(uri, None)
            schedule(uri, DEBOUNCE)

    @server.feature(lsp.NOTEBOOK_DOCUMENT_DID_SAVE)
    def notebook_save(params: lsp.DidSaveNotebookDocumentParams) -> None:
        if params.notebook_document.uri in notebooks:
            schedule(params.notebook_document.uri)

    @server.feature(lsp.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def notebook_close(params: lsp.DidCloseNotebookDocumentParams) -> None:
        if params.notebook_document.uri in notebooks:
            forget(params.notebook_document.uri)

    @server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def did_change_configuration(params: lsp.DidChangeConfigurationParams) -> None:
        set_client(params.settings, "config")
        relint_all()

    def current(uri: str, version: int | None = None) -> _State | None:
        """The state of target ``uri`` when it was linted at the editor's version (and
        ``version``, when given, is that one)."""
        state = states.get(uri)
        if state is None or (uri not in open_docs and uri not in notebooks):
            return None
        now = snapshot(uri)[0]
        if now != state.version or (version is not None and version != now):
            return None
        return state

    def workspace_edit(state: _State, edits) -> object:
        """A versioned edit per piece from ``(index, start, end, text)`` edits."""
        by_piece: dict[int, list] = {}
        for index, start, end, text in edits:
            piece = state.pieces[index]
            by_piece.setdefault(index, []).append(
                lsp.TextEdit(range=lsp_range(piece.lines, start, end), new_text=text))
        return lsp.WorkspaceEdit(document_changes=[
            lsp.TextDocumentEdit(text_document=lsp.OptionalVersionedTextDocumentIdentifier(
                uri=state.pieces[index].uri, version=state.pieces[index].version), edits=items)
            for index, items in sorted(by_piece.items())])

    def fix_edit(state: _State, new: str | None):
        if new is None:
            return None
        edits = piece_edits(state.text, new, state.pieces, state.masked)
        return workspace_edit(state, edits) if edits else None

    async def fix_all_edit(uri: str, version: int | None):
        state = current(uri, version)
        if state is None or not any(applicability(r.code) == SAFE for r in state.results):
            return None
        if "all" not in state.cache:
            state.cache["all"] = await asyncio.get_running_loop().run_in_executor(
                executor, fixed_text, state.text, path_of(uri), state.resolved)
        if current(uri, state.version) is None:
            return None
        return fix_edit(state, state.cache["all"])

    @server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION, lsp.CodeActionOptions(
        code_action_kinds=[lsp.CodeActionKind.QuickFix, FIX_ALL_KIND], resolve_provider=False))
    async def code_action(params: lsp.CodeActionParams):
        uri = target_of(params.text_document.uri)
        state = current(uri)
        if state is None:
            return None
        only = params.context.only

        def wants(kind: str) -> bool:
            return only is None or any(kind == k or kind.startswith(f"{k}.") for k in only)

        by_key = {tuple(finding_key(r)): r for r in state.results}
        versions = {piece.uri: piece.version for piece in state.pieces}
        actions = []
        fixable_here = False
        loop = asyncio.get_running_loop()
        path = path_of(uri)
        for diag in params.context.diagnostics if wants(lsp.CodeActionKind.QuickFix) else ():
            data = diag.data if isinstance(diag.data, dict) else {}
            key = data.get("key")
            if diag.source != SOURCE or not isinstance(key, list) or \
                    data.get("version") != versions.get(params.text_document.uri, object()):
                continue
            r = by_key.get(tuple(key))
            if r is None or r.code in NOT_RULES:
                continue
            kind = applicability(r.code)
            if kind in (SAFE, UNSAFE):
                fixable_here = fixable_here or kind == SAFE
                spot = tuple(finding_key(r))
                if ("fix", spot) not in state.cache:
                    state.cache["fix", spot] = await loop.run_in_executor(
                        executor, lambda: fixed_text(state.text, path, state.resolved, unsafe=kind == UNSAFE,
                                                     only=lambda f: (f.line, f.col, f.code) == spot))
                new = state.cache["fix", spot]
                edit = fix_edit(state, new) if current(uri, state.version) is not None else None
                if edit is not None:
                    label = f"Fix {r.code}" + (" (unsafe: may change behaviour)" if kind == UNSAFE else "")
                    actions.append(lsp.CodeAction(
                        title=f"{label}: {r.message.split('; ', 1)[-1]}", kind=lsp.CodeActionKind.QuickFix,
                        diagnostics=[diag], is_preferred=kind == SAFE, edit=edit))
            if ("noqa", r.line, r.code) not in state.cache:
                state.cache["noqa", r.line, r.code] = await loop.run_in_executor(
                    executor, noqa_edit, state.text, r.line, r.code)
            place = state.cache["noqa", r.line, r.code]
            if place is not None and place[0] not in state.masked:
                line0, start, stop, new_text = place
                index, local = locate(state.pieces, line0)
                actions.append(lsp.CodeAction(
                    title=f"Add `# noqa: {r.code}` on line {local + 1}", kind=lsp.CodeActionKind.QuickFix,
                    diagnostics=[diag], edit=workspace_edit(state, [(index, (local, start), (local, stop), new_text)])))
        explicit = only is not None and wants(FIX_ALL_KIND)
        if wants(FIX_ALL_KIND) and (explicit or fixable_here):
            edit = await fix_all_edit(uri, state.version)
            if edit is not None:
                actions.append(lsp.CodeAction(title="Fix every safe flake8-xla finding in the file",
                                              kind=FIX_ALL_KIND, edit=edit))
        return actions or None

    @server.command(FIX_ALL_COMMAND)
    async def fix_all_command(*args: Any):
        target = args[0] if args else None
        if isinstance(target, dict):
            uri, version = target.get("uri"), target.get("version")
        else:
            uri, version = target, None
        if not isinstance(uri, str) or not (version is None or isinstance(version, int)):
            return {"applied": False, "reason": "expected the document's URI or {uri, version}"}
        uri = target_of(uri)
        edit = await fix_all_edit(uri, version)
        if edit is None:
            reason = "nothing to fix" if current(uri, version) is not None else \
                "the document is not open, or changed since it was linted"
            return {"applied": False, "reason": reason}
        result = await server.workspace_apply_edit_async(lsp.ApplyWorkspaceEditParams(
            edit=edit, label="flake8-xla: fix every safe finding"))
        return {"applied": bool(result.applied), "reason": result.failure_reason}

    @server.feature(lsp.SHUTDOWN)
    def shutdown(*_: Any) -> None:
        for task in list(pending.values()):
            task.cancel()
        executor.shutdown(wait=False, cancel_futures=True)

    return server


def main(argv: Iterable[str] | None = None) -> int:
    """``flake8-xla server``: serve one client over stdin/stdout until it sends ``exit``.
    Returns 2 (after one line on stderr) when pygls is not installed."""
    import argparse

    parser = argparse.ArgumentParser(prog="flake8-xla server",
                                     description="The flake8-xla language server (LSP over standard input/output).")
    parser.add_argument("--stdio", action="store_true", help="talk over standard input/output (the default, and the only way)")
    parser.add_argument("--log-file", metavar="FILE", help="append the server's log to FILE")
    args = parser.parse_args(list(argv) if argv is not None else sys.argv[1:])
    try:
        import pygls  # noqa: F401
        import lsprotocol  # noqa: F401
    except ImportError:
        sys.stderr.write(f"flake8-xla server: error: the language server needs pygls: {LSP_COMMAND}\n")
        return 2
    if args.log_file:
        logging.basicConfig(filename=args.log_file, level=logging.INFO)
    build_server().start_io()
    return 0


if __name__ == "__main__":
    sys.exit(main())
