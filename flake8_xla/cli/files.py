"""Which files the CLI lints, and linting one of them as flake8 would.

Discovery follows flake8's (``flake8/discover_files.py``): a named path that matches an
exclude pattern is skipped, folders are walked for ``*.py`` files (and notebooks, ``*.ipynb``,
which flake8 does not read), a folder or file that
matches a pattern (its name, or its absolute path) is skipped with everything below it,
and a file named on the command line is linted whatever its suffix. On top of that, with
``respect-gitignore`` (the default, as in Ruff), what git ignores is skipped while walking:
the ``.gitignore`` files from the root of the git work tree down to each file, and
``.git/info/exclude`` (not git's global excludes file). A folder you name is walked even
when git ignores it; what is inside it is then judged by the ``.gitignore`` files below it.
"""

from __future__ import annotations

import dataclasses
import io
import logging
import os
import sys
import tokenize
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

#: flake8's default excludes plus Ruff's (virtualenvs, build output, tool caches)
DEFAULT_EXCLUDE = (
    ".svn", "CVS", ".bzr", ".hg", ".git", "__pycache__", ".tox", ".nox", ".eggs", "*.egg",  # flake8's
    ".direnv", ".git-rewrite", ".ipynb_checkpoints", ".mypy_cache", ".pants.d", ".pyenv", ".pytest_cache",
    ".pytype", ".ruff_cache", ".venv", ".vscode", "__pypackages__", "_build", "buck-out", "build", "dist",
    "node_modules", "site-packages", "venv",  # Ruff's
    "*.egg-info",
)

STDIN = "-"


_LOG = logging.getLogger(__name__)


def matches(path: str, patterns: list[str]) -> bool:
    """flake8's exclude test: the name or the absolute path matches a pattern."""
    from flake8.utils import matches_filename

    return matches_filename(path, patterns=patterns, log_message="%(path)s %(whether)s", logger=_LOG)


class GitIgnore:
    """git's ignore rules for paths inside a git work tree, read with pathspec (cached)."""

    def __init__(self) -> None:
        import pathspec

        self._pathspec = pathspec
        self._specs: dict[Path, object] = {}
        self._roots: dict[Path, Path | None] = {}

    def root(self, folder: Path) -> Path | None:
        """The work tree holding ``folder`` (the nearest folder with a ``.git`` entry)."""
        if folder not in self._roots:
            if (folder / ".git").exists():
                self._roots[folder] = folder
            else:
                self._roots[folder] = None if folder.parent == folder else self.root(folder.parent)
        return self._roots[folder]

    def _spec(self, file: Path):
        if file not in self._specs:
            spec = None
            try:
                text = file.read_text(encoding="utf-8", errors="replace")
            except OSError:
                text = ""
            if text.strip():
                spec = self._pathspec.GitIgnoreSpec.from_lines(text.splitlines())
            self._specs[file] = spec
        return self._specs[file]

    def decision(self, path: Path, is_dir: bool, folders: list[Path], root: Path | None) -> bool | None:
        """Ignored (True), re-included (False) or no rule (None) by the ``.gitignore`` files of
        ``folders`` (deepest first: the first with a rule for ``path`` decides), then by
        ``.git/info/exclude`` of ``root`` (``None``: not consulted)."""
        sources = [(f / ".gitignore", f) for f in sorted(folders, key=lambda f: len(f.parts), reverse=True)]
        if root is not None:
            sources.append((root / ".git" / "info" / "exclude", root))
        for file, base in sources:
            spec = self._spec(file)
            if spec is None:
                continue
            rel = path.relative_to(base).as_posix() + ("/" if is_dir else "")
            result = spec.check_file(rel)
            if result.include is not None:
                return result.include
        return None


@dataclass
class Walker:
    exclude: list[str]
    respect_gitignore: bool = True

    def __post_init__(self) -> None:
        self.gitignore = GitIgnore() if self.respect_gitignore else None

    def excluded(self, path: str) -> bool:
        return matches(path, self.exclude)

    def files(self, paths: list[str], stdin_name: str | None) -> Iterator[str]:
        """The files to lint, in a stable order (each named path in turn, folders sorted)."""
        for arg in paths:
            if arg == STDIN:
                if stdin_name is None or not self.excluded(stdin_name):
                    yield STDIN
                continue
            if self.excluded(arg):
                continue
            if os.path.isdir(arg):
                yield from self._walk(arg)
            else:
                yield arg

    def _walk(self, top: str) -> Iterator[str]:
        git = self._git_context(top)
        for root, dirs, files in os.walk(top):
            kept = []
            for name in sorted(dirs):
                joined = os.path.join(root, name)
                if not self.excluded(joined) and not self._ignored(git, joined, True):
                    kept.append(name)
            dirs[:] = kept
            for name in sorted(files):
                if not name.endswith((".py", ".ipynb")):
                    continue
                joined = os.path.join(root, name)
                if not self.excluded(joined) and not self._ignored(git, joined, False):
                    yield joined

    def _git_context(self, top: str) -> tuple[Path, list[Path], Path | None] | None:
        """For a walk from ``top`` inside a git work tree: ``top``, the folders above it (up to
        the work tree's root) whose ``.gitignore`` files apply, and the root whose
        ``.git/info/exclude`` applies. When git ignores ``top`` itself, the rules above it do
        not apply: a folder named on the command line is walked."""
        if self.gitignore is None:
            return None
        top_path = Path(os.path.abspath(top))
        root = self.gitignore.root(top_path)
        if root is None:
            return None
        above = [f for f in top_path.parents if f == root or root in f.parents]
        if top_path != root and self.gitignore.decision(top_path, True, above, root):
            return top_path, [], None
        return top_path, above, root

    def _ignored(self, git, path: str, is_dir: bool) -> bool:
        if git is None:
            return False
        top, above, root = git
        p = Path(os.path.abspath(path))
        below = [f for f in p.parents if f == top or top in f.parents]
        return bool(self.gitignore.decision(p, is_dir, below + above, root))


class _ProcessorOptions:
    """The few flake8 options FileProcessor reads; any other one reads as None."""

    def __init__(self, **kwargs) -> None:
        self.__dict__.update(kwargs)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return None


@dataclass(frozen=True)
class Result:
    """One reported finding. ``col`` / ``end_col`` are 1-based as flake8 prints them (UTF-8
    bytes from the line start, +1; ``end_col`` is exclusive); ``char_col`` / ``char_end_col``
    count characters (for SARIF); ``text`` is the finding's line (for baselines), ``""`` when
    the file could not be read or parsed."""

    path: str
    line: int
    col: int
    code: str
    message: str
    end_line: int | None = None
    end_col: int | None = None
    char_col: int | None = None
    char_end_col: int | None = None
    text: str = ""
    #: in a notebook: the 1-based cell (``line`` / ``col`` are then in that cell), and the
    #: (line, character column) of the start and end in the file's JSON text (SARIF, GitHub)
    cell: int | None = None
    raw: tuple[int, int] | None = None
    raw_end: tuple[int, int] | None = None


def read_stdin() -> list[str]:
    """Standard input's lines, decoded and split as flake8 reads them (PEP 263 cookie, else
    UTF-8; universal newlines: a lone ``\r`` ends a line too)."""
    from ..lines import universal_lines

    data = sys.stdin.buffer.read()
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        text = data.decode(encoding)
    except (LookupError, SyntaxError, UnicodeError):
        text = data.decode("utf-8", errors="replace")
    return universal_lines(text)


def _char_col(lines: list[str], line: int, col0: int | None) -> int | None:
    if col0 is None or not 1 <= line <= len(lines):
        return None
    return len(lines[line - 1].encode("utf-8")[:col0].decode("utf-8", errors="ignore")) + 1


def syntax_position(exc: BaseException) -> tuple[int, int]:
    """(row, column) of a syntax error as flake8 takes them (``checker._extract_syntax_information``)."""
    args = getattr(exc, "args", ())
    if len(args) > 1 and args[1] and len(args[1]) > 2:
        row, column = args[1][1:3]
    elif isinstance(exc, tokenize.TokenError) and len(args) == 2 and len(args[1]) == 2:
        row, column = args[1]
    else:
        row, column = 1, 0
    return row or 1, column or 0


def lint(display: str, settings, lines: list[str] | None = None, filename: str | None = None) -> list[Result]:
    """Findings for one file (``lines`` given for stdin), after ``# noqa`` as flake8 applies it.
    ``filename`` is the file project mode reads the project from: ``display`` for a file,
    the ``--stdin-filename`` for stdin (``None`` without one: the module alone).
    A file that cannot be read is one ``E902``; one that does not parse one ``E999`` at the
    position flake8 reports. A notebook (``.ipynb``: ``display``, or ``filename`` for stdin)
    is linted by :func:`lint_notebook`; standard input named ``.ipynb`` that is not JSON (an
    editor sending a notebook's cells as Python) is linted as a module."""
    from ..notebook import is_notebook

    if lines is None and is_notebook(display):
        return lint_notebook(display, settings)
    if lines is not None and is_notebook(filename):
        text = "".join(lines)
        if text.lstrip().startswith("{"):
            return lint_notebook(display, settings, text)
    return _lint_module(display, settings, lines, filename)


def lint_notebook(display: str, settings, text: str | None = None) -> list[Result]:
    """Findings for one notebook (its JSON ``text``, else the file ``display``): its code
    cells linted as one module (:mod:`flake8_xla.notebook`), each finding placed in its cell
    (``cell``, and ``line`` / ``col`` in that cell) and in the JSON text (``raw``). ``# noqa``
    works per line. A file that cannot be read, or is no notebook, is one ``E902``; a cell
    that does not parse stops the module at one ``E999`` in that cell, as for a file."""
    from ..notebook import NotebookError, parse
    from ..project.files import read_regular

    if text is None:
        try:
            data, _ = read_regular(display)
            if data is None:
                raise OSError(f"{display}: not a regular file")
            text = data.decode("utf-8-sig")
        except (OSError, UnicodeError) as exc:
            return [Result(display, 1, 1, "E902", f"{type(exc).__name__}: {exc}")]
    try:
        nb = parse(text)
    except NotebookError as exc:
        return [Result(display, 1, 1, "E902", f"not a notebook: {exc}")]
    return lint_cells(display, settings, nb)


def lint_cells(display: str, settings, nb) -> list[Result]:
    """Findings for the code cells of ``nb`` (a :class:`flake8_xla.notebook.Notebook`), as
    :func:`lint_notebook` reports them (``cell`` is each cell's ``index``)."""
    module = nb.module_lines()
    if not module:
        return []
    out = []
    for r in _lint_module(display, settings, module, None):
        where = nb.locate(r.line)
        if where is None:  # not in a cell (an error past the end): the cell's last line
            where = nb.locate(len(module))
        cell, line = where
        shift = cell.shift[line - 1]
        col, char_col = r.col + shift, (r.char_col or 1) + shift
        end_line = end_col = char_end_col = raw_end = None
        end = nb.locate(r.end_line) if r.end_line is not None else None
        if end is not None and end[0] is cell and r.end_col is not None:
            end_shift = cell.shift[end[1] - 1]
            end_line, end_col, char_end_col = end[1], r.end_col + end_shift, (r.char_end_col or 1) + end_shift
            raw_end = nb.raw_position(cell, end_line, char_end_col)
        out.append(dataclasses.replace(
            r, message=nb.cell_lines(r.message), line=line, col=col, end_line=end_line, end_col=end_col,
            char_col=char_col, char_end_col=char_end_col, cell=cell.index, raw=nb.raw_position(cell, line, char_col),
            raw_end=raw_end))
    return out


def _lint_module(display: str, settings, lines: list[str] | None = None, filename: str | None = None) -> list[Result]:
    from flake8.processor import FileProcessor
    from flake8.violation import Violation

    from ..engine import run

    options = _ProcessorOptions(hang_closing=False, indent_size=4, max_line_length=79, max_doc_length=None,
                                disable_noqa=False, verbose=0, stdin_display_name=display)
    try:
        processor = FileProcessor(display, options, lines=lines)
    except (OSError, UnicodeError, LookupError) as exc:  # LookupError: `# coding: hex`, not a text codec
        return [Result(display, 1, 1, "E902", f"{type(exc).__name__}: {exc}")]
    if processor.should_ignore_file():
        return []
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = processor.build_ast()
    except (SyntaxError, tokenize.TokenError) as exc:
        row, column = syntax_position(exc)
        code = "E902" if isinstance(exc, tokenize.TokenError) else "E999"
        message = exc.args[0] if exc.args else str(exc)
        return [Result(display, row, column + 1, code, f"{type(exc).__name__}: {message}", char_col=column or 1)]
    except ValueError as exc:  # null bytes before Python 3.12
        return [Result(display, 1, 1, "E999", f"{type(exc).__name__}: {exc}")]
    except (RecursionError, MemoryError) as exc:
        return [Result(display, 1, 1, "E999", f"{type(exc).__name__}: too deeply nested to parse")]
    out = []
    src_lines = processor.lines
    if lines is None:
        filename = display
    for f in run(tree, settings, "".join(src_lines), filename=filename):
        logical = processor.noqa_line_for(f.line)
        violation = Violation(f.code, display, f.line, f.col + 1, f.message, logical)
        if logical is not None and violation.is_inline_ignored(False):
            continue
        end_line, end_col0 = f.end if f.end else (None, None)
        out.append(Result(display, f.line, f.col + 1, f.code, f.message, end_line,
                          end_col0 + 1 if end_col0 is not None else None,
                          _char_col(src_lines, f.line, f.col),
                          _char_col(src_lines, end_line, end_col0) if end_line else None,
                          src_lines[f.line - 1] if 1 <= f.line <= len(src_lines) else ""))
    return out


__all__ = ["DEFAULT_EXCLUDE", "STDIN", "Result", "Walker", "lint", "lint_cells", "lint_notebook", "read_stdin"]
