"""The flake8 adapter: ``flake8 --select=XLA``.

flake8 parses each file once and hands the tree to this plugin; the plugin runs the
engine and yields ``(line, col0, "XLA### message", type)``. noqa, select and ignore are
flake8's job; the hint-level rules are in flake8's default-ignore list (as bugbear's B9),
so they report only once XLA is selected explicitly. Options ``--xla-scope``,
``--xla-version``, ``--xla-reducing-calls``, ``--xla-launchers``, ``--xla-project`` and ``--xla-baseline``
are also read from ``setup.cfg`` / ``tox.ini`` / ``.flake8`` (``xla-scope = always``). With
``--xla-baseline FILE`` (written by ``flake8-xla --write-baseline FILE``) the findings the
baseline records are not reported (:mod:`flake8_xla.baseline`); a path with a ``/`` in a
config file is relative to that file, as flake8 resolves ``exclude``.

flake8 reads a notebook named on its command line as Python (its JSON parses as an
expression): the plugin reports one ``XLA099`` on line 1 that says to run ``flake8-xla`` on it.
Python code under a ``.ipynb`` name (an editor or flake8-nb passing the cells) is linted.
"""

from __future__ import annotations

import ast
import dataclasses
import sys
from typing import Iterator, Sequence

from . import __version__
from .baseline import filter_lines
from .engine import run
from .registry import all_rules, hint_codes, notebook_finding
from .settings import OPTIONS, SCOPES, Settings, SettingsError, from_options


class Plugin:
    """flake8 tree plugin (entry point ``XLA``)."""

    name = "flake8-xla"
    version = __version__
    settings = Settings()

    def __init__(self, tree: ast.AST, lines: Sequence[str] | None = None, filename: str = "") -> None:
        self.tree = tree
        self.lines = lines
        self.filename = filename

    @staticmethod
    def add_options(option_manager) -> None:
        for opt in OPTIONS:
            option_manager.add_option(
                f"--{opt.name}",
                default=opt.default,
                parse_from_config=True,
                comma_separated_list=opt.multiple,
                normalize_paths=opt.name == "xla-baseline",
                metavar=opt.metavar,
                help=opt.help,
            )
        # hint-level rules: off unless XLA is selected explicitly (--select=XLA, --extend-select=XLA)
        option_manager.extend_default_ignore(hint_codes())

    @classmethod
    def parse_options(cls, options) -> None:
        try:
            cls.settings = from_options({opt.name: getattr(options, opt.name.replace("-", "_"), None) for opt in OPTIONS})
        except SettingsError as exc:
            # one line, like argparse, and no traceback: also for values from config files. Not
            # flake8.exceptions.ExecutionError: flake8 prints it as two lines on stdout and exits
            # 1, the status of "findings"; any other exception is a traceback.
            sys.stderr.write(f"flake8: error: {exc}\n")
            raise SystemExit(2) from None
        cls.settings = dataclasses.replace(cls.settings, unreported=_unreported(options))

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        notebook = notebook_finding(self.filename, self.tree, "flake8")
        if notebook is not None:  # its JSON parsed as Python: say to lint it with flake8-xla instead
            yield notebook.line, notebook.col, notebook.text, type(self)
            return
        # flake8 names stdin "stdin" (or --stdin-display-name): no file there, so no project
        found = run(self.tree, self.settings, self.lines, filename=self.filename)
        if self.settings.baseline:
            try:
                found = filter_lines(self.settings, self.filename, found, self.lines)
            except SettingsError as exc:  # the file changed or went away since the run began
                sys.stderr.write(f"flake8: error: {exc}\n")
                raise SystemExit(2) from None
        for f in found:
            yield f.line, f.col, f.text, type(self)


def _unreported(options) -> tuple[str, ...]:
    """The XLA codes flake8's select / ignore options (not per-file-ignores) leave out:
    their findings supersede nothing (``Settings.unreported``). None when flake8 gave no
    selection (a host that calls ``parse_options`` with a namespace of its own)."""
    try:
        from flake8.style_guide import Decision, DecisionEngine

        engine = DecisionEngine(options)
        return tuple(code for code in sorted(all_rules()) if engine.decision_for(code) is not Decision.Selected)
    except (AttributeError, TypeError, ValueError):
        return ()


__all__ = ["Plugin", "SCOPES"]
