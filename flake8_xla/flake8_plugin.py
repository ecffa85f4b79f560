"""The flake8 adapter: ``flake8 --select=XLA``.

flake8 parses each file once and hands the tree to this plugin; the plugin runs the
engine and yields ``(line, col0, "XLA### message", type)``. noqa, select and ignore are
flake8's job; the hint-level rules are in flake8's default-ignore list (as bugbear's B9),
so they report only once XLA is selected explicitly. Options ``--xla-scope``,
``--xla-version``, ``--xla-reducing-calls`` and ``--xla-launchers`` are also read from
``setup.cfg`` / ``tox.ini`` / ``.flake8`` (``xla-scope = always``).
"""

from __future__ import annotations

import ast
import dataclasses
import sys
from typing import Iterator, Sequence

from . import __version__
from .engine import run
from .registry import hint_codes
from .settings import (NEWEST_VERSION, SCOPES, Settings, SettingsError, parse_names, parse_scope, parse_version,
                       version_str)


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
        option_manager.add_option(
            "--xla-reducing-calls",
            default="",
            parse_from_config=True,
            comma_separated_list=True,
            metavar="NAMES",
            help="in-house helpers that all-reduce gradients (mylib.dist.sync_grads, or a bare name): "
            "a call to one counts as gradient reduction (XLA201).",
        )
        option_manager.add_option(
            "--xla-launchers",
            default="",
            parse_from_config=True,
            comma_separated_list=True,
            metavar="NAMES",
            help="in-house launch wrappers whose first argument (or fn=) is the launched function, "
            "like torch_xla.launch.",
        )
        # hint-level rules: off unless XLA is selected explicitly (--select=XLA, --extend-select=XLA)
        option_manager.extend_default_ignore(hint_codes())

    @classmethod
    def parse_options(cls, options) -> None:
        try:
            cls.settings = dataclasses.replace(
                Settings(
                    scope=parse_scope(getattr(options, "xla_scope", "auto")),
                    target_version=parse_version(getattr(options, "xla_version", version_str(NEWEST_VERSION))),
                ),
                reducing_calls=parse_names(getattr(options, "xla_reducing_calls", None), "--xla-reducing-calls"),
                launchers=parse_names(getattr(options, "xla_launchers", None), "--xla-launchers"),
            )
        except SettingsError as exc:
            # one line, like argparse, and no traceback: also for values from config files
            sys.stderr.write(f"flake8: error: {exc}\n")
            raise SystemExit(2) from None

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        for f in run(self.tree, self.settings, self.lines):
            yield f.line, f.col, f.text, type(self)


__all__ = ["Plugin", "SCOPES"]
