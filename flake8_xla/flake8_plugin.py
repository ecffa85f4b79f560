"""The flake8 adapter: ``flake8 --select=XLA``.

flake8 parses each file once and hands the tree to this plugin; the plugin runs the
engine and yields ``(line, col0, "XLA### message", type)``. noqa, select and ignore are
flake8's job. Options ``--xla-scope`` and ``--xla-version`` are also read from
``setup.cfg`` / ``tox.ini`` / ``.flake8`` (``xla-scope = always``).
"""

from __future__ import annotations

import ast
import sys
from typing import Iterator, Sequence

from . import __version__
from .engine import run
from .settings import NEWEST_VERSION, SCOPES, Settings, SettingsError, parse_scope, parse_version, version_str


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
        option_manager.add_option(
            "--xla-scope",
            default="auto",
            parse_from_config=True,
            metavar="{auto,always}",
            help="auto (default): XLA-context rules only in modules that import torch_xla; "
            "always: treat every module as XLA code (porting a CUDA script).",
        )
        option_manager.add_option(
            "--xla-version",
            default=version_str(NEWEST_VERSION),
            parse_from_config=True,
            metavar="X.Y",
            help="torch_xla release to target, e.g. 2.7 (default: %(default)s, the newest the rules know).",
        )

    @classmethod
    def parse_options(cls, options) -> None:
        try:
            cls.settings = Settings(
                scope=parse_scope(getattr(options, "xla_scope", "auto")),
                target_version=parse_version(getattr(options, "xla_version", version_str(NEWEST_VERSION))),
            )
        except SettingsError as exc:
            # one line, like argparse, and no traceback: also for values from config files
            sys.stderr.write(f"flake8: error: {exc}\n")
            raise SystemExit(2) from None

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        for f in run(self.tree, self.settings, self.lines):
            yield f.line, f.col, f.text, type(self)


__all__ = ["Plugin", "SCOPES"]
