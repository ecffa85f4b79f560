"""The IPython extension, for Colab, Kaggle and Jupyter, where no other hook exists.

In a notebook::

    %load_ext flake8_xla
    %xla_lint            # lint every cell run so far, as one module (as the kernel ran them)
    %xla_lint --on       # from now on, print the findings of each cell before it runs
    %xla_lint --off      # stop that

    %%xla_lint
    ...                  # lint this cell (in the context of the cells run so far); not run

Each finding is one line, ``cell [5]:2:5: XLA101 message`` (the cell's execution count, the
line and column in it). The check before each cell (IPython's ``pre_run_cell`` event) only
prints: the cell always runs, and an error inside the linter is swallowed. Cells run so far
that do not parse are left out (they did not run). The rules are those ``flake8-xla``
reports by default (the hints are off), with the default settings.

Needs only the base install: no LibCST, no nbformat.
"""

from __future__ import annotations

import ast
import sys
import warnings

from .notebook import Cell, Notebook, cell_python

MAGIC = "xla_lint"
#: the codes the extension prints: the rules' (a cell that does not parse is IPython's to report)
_PREFIX = "XLA"


def _converted(index: int, source: str, transformer) -> Cell | None:
    converted = cell_python(source, transformer)
    if converted is None:
        return None
    python, magic, shift = converted
    return Cell(index, source, python, magic, shift)


def _parses(cell: Cell) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse("".join(cell.python))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def _is_own(source: str) -> bool:
    """A cell that calls this extension's magic (it is not linted)."""
    text = source.lstrip()
    return text.startswith((f"%{MAGIC}", f"%%{MAGIC}"))


class XlaLint:
    """The extension's state in one shell: the magic and the ``pre_run_cell`` check."""

    def __init__(self, shell, out=None) -> None:
        from .cli.select import Selector
        from .settings import Settings

        self.shell = shell
        self.out = out
        self.auto = False
        self.settings = Settings()
        self.selector = Selector()

    def history(self) -> list[tuple[int, str]]:
        """(execution count, raw text) of each cell run so far, this extension's own left out."""
        raw = list(getattr(self.shell.history_manager, "input_hist_raw", None) or [])
        return [(n, text) for n, text in enumerate(raw) if n and text.strip() and not _is_own(text)]

    def findings(self, cells: list[tuple[int, str]], only: int | None = None) -> list[str]:
        """The lines to print for ``cells`` ((execution count, text), linted as one module):
        every finding, or only those in the cell numbered ``only`` (which is kept even when it
        does not parse)."""
        from .cli.files import lint_cells
        from .notebook import _transformer

        transformer = _transformer()
        kept = []
        for n, text in cells:
            cell = _converted(n, text, transformer)
            if cell is not None and (n == only or _parses(cell)):
                kept.append(cell)
        lines = []
        for r in lint_cells("<cells>", self.settings, Notebook("", kept)):
            if only is not None and r.cell != only:
                continue
            if not r.code.startswith(_PREFIX) or not self.selector.reported("<cells>", r.code):
                continue
            lines.append(f"cell [{r.cell}]:{r.line}:{r.col}: {r.code} {r.message}")
        return lines

    def _count(self, stored: bool) -> int:
        """The execution count of the cell being run: the history's length, less one once
        the cell is in it (IPython stores a cell after ``pre_run_cell`` and before running it;
        when ``execution_count`` grows differs between IPython 7 and 9)."""
        raw = getattr(self.shell.history_manager, "input_hist_raw", None) or [""]
        return len(raw) - 1 if stored else len(raw)

    def _print(self, lines: list[str]) -> None:
        out = self.out or sys.stdout
        for line in lines:
            out.write(line + "\n")
        out.flush()

    def magic(self, line: str = "", cell: str | None = None):
        """``%xla_lint [--on|--off]`` and ``%%xla_lint``."""
        arg = line.strip()
        if cell is not None:
            count = self._count(stored=True)
            history = [(n, t) for n, t in self.history() if n != count]
            found = self.findings(history + [(count, cell)], only=count)
            self._print(found or [f"cell [{count}]: no findings"])
            return None
        if arg in ("--on", "--off"):
            self.auto = arg == "--on"
            self._print([f"flake8-xla: check before each cell {'on' if self.auto else 'off'}"])
            return None
        if arg:
            self._print([f"flake8-xla: unknown argument {arg!r} (%xla_lint, %xla_lint --on, %xla_lint --off)"])
            return None
        found = self.findings(self.history())
        self._print(found or ["flake8-xla: no findings in the cells run so far"])
        return None

    def pre_run_cell(self, info=None) -> None:
        """IPython's ``pre_run_cell`` event: with ``--on``, print the findings of the cell
        about to run. Never raises: the cell runs whatever happens here."""
        if not self.auto:
            return
        try:
            raw = getattr(info, "raw_cell", None)
            if not raw or _is_own(raw):
                return
            count = self._count(stored=False)
            history = [(n, t) for n, t in self.history() if n != count]
            self._print(self.findings(history + [(count, raw)], only=count))
        except Exception as exc:  # never block the user's cell
            try:
                self._print([f"flake8-xla: the check failed ({type(exc).__name__}); the cell runs as usual"])
            except Exception:
                pass


def load_ipython_extension(shell) -> XlaLint:
    """``%load_ext flake8_xla``: registers ``%xla_lint`` / ``%%xla_lint`` and the (off)
    ``pre_run_cell`` check on ``shell``; returns the extension's state."""
    state = XlaLint(shell)
    shell.register_magic_function(state.magic, "line_cell", MAGIC)
    shell.events.register("pre_run_cell", state.pre_run_cell)
    shell._flake8_xla = state
    return state


def unload_ipython_extension(shell) -> None:
    """``%unload_ext flake8_xla``: the check stops (IPython keeps the magic registered)."""
    state = getattr(shell, "_flake8_xla", None)
    if state is not None:
        state.auto = False
        try:
            shell.events.unregister("pre_run_cell", state.pre_run_cell)
        except ValueError:
            pass


__all__ = ["XlaLint", "load_ipython_extension", "unload_ipython_extension"]
