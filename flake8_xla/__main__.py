"""Standalone CLI: ``flake8-xla [PATH ...]`` or ``python -m flake8_xla`` (for ruff users and CI).

Lints files and folders (recursing into ``*.py``, skipping virtualenv, build and VCS
folders) with the same engine as the flake8 plugin. Reads ``[tool.flake8-xla]`` from the
nearest ``pyproject.toml``; honours ``# noqa`` / ``# noqa: XLA101``
and ``# flake8: noqa`` exactly as flake8 does, through flake8's own noqa machinery.

Exit status: 0 no findings, 1 findings (a file that does not parse counts, as ``E999``),
2 usage error (bad option or config value, missing path).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import sys
import warnings
from pathlib import Path

from . import __version__, fix
from .engine import run
from .registry import all_rules
from .settings import NEWEST_VERSION, SCOPES, SettingsError, parse_scope, parse_version, version_str, Settings

SKIP_DIRS = frozenset({
    ".git", ".hg", ".svn", ".bzr", ".tox", ".nox", ".venv", "venv", ".env", "env", "build", "dist",
    "__pycache__", ".eggs", "node_modules", ".mypy_cache", ".pytest_cache", ".ruff_cache", "site-packages",
})
FORMATS = ("default", "json", "github")


def find_pyproject(start: Path) -> Path | None:
    for folder in [start, *start.parents]:
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def read_config(path: Path | None) -> dict:
    """``[tool.flake8-xla]`` of a pyproject.toml, keys normalised to ``xla_scope`` style."""
    if path is None:
        return {}
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise SettingsError(f"{path}: cannot read: {exc}") from None
    section = data.get("tool", {}).get("flake8-xla", {})
    if not isinstance(section, dict):
        raise SettingsError(f"{path}: [tool.flake8-xla] must be a table")
    known = {"select", "ignore", "xla-scope", "xla-version", "format"}
    out = {}
    for key, value in section.items():
        norm = key.replace("_", "-")
        if norm not in known:
            raise SettingsError(f"{path}: [tool.flake8-xla] unknown key {key!r} (known: {', '.join(sorted(known))})")
        out[norm.replace("-", "_")] = value
    return out


def codes_list(value) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        value = value.replace(",", " ").split()
    return [str(v).strip().upper() for v in value if str(v).strip()]


def iter_files(paths: list[str]):
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.endswith(".egg-info"))
                for name in sorted(files):
                    if name.endswith(".py"):
                        yield Path(root) / name
        else:
            yield path


class _ProcessorOptions(argparse.Namespace):
    """The few flake8 options FileProcessor reads; any other one reads as None."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return None


def lint_file(path: Path, settings: Settings) -> list[tuple[int, int, str, str]]:
    """(line, col 1-based, code, message) for one file; E902/E999 when it cannot be read or parsed."""
    from flake8.processor import FileProcessor
    from flake8.violation import Violation

    options = _ProcessorOptions(hang_closing=False, indent_size=4, max_line_length=79, max_doc_length=None,
                                disable_noqa=False, verbose=0)
    try:
        processor = FileProcessor(str(path), options)
    except (OSError, UnicodeError) as exc:
        return [(1, 1, "E902", f"{type(exc).__name__}: {exc}")]
    if processor.should_ignore_file():
        return []
    source = "".join(processor.lines)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(source, filename=str(path))
    except (SyntaxError, ValueError) as exc:
        line = getattr(exc, "lineno", None) or 1
        col = getattr(exc, "offset", None) or 1
        return [(line, col, "E999", f"{type(exc).__name__}: {getattr(exc, 'msg', exc)}")]
    except (RecursionError, MemoryError) as exc:
        return [(1, 1, "E999", f"{type(exc).__name__}: too deeply nested to parse")]
    out = []
    for f in run(tree, settings, source):
        logical = processor.noqa_line_for(f.line)
        violation = Violation(f.code, str(path), f.line, f.col + 1, f.message, logical)
        if logical is not None and violation.is_inline_ignored(False):
            continue
        out.append((f.line, f.col + 1, f.code, f.message))
    return out


def selected(code: str, select: list[str], ignore: list[str]) -> bool:
    if code in ("E902", "E999"):
        return True
    if select and not code.startswith(tuple(select)):
        return False
    return not (ignore and code.startswith(tuple(ignore)))


SEVERITY = {code: cls.severity for code, cls in all_rules().items()}


def _github_escape(text: str, prop: bool = False) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if prop:
        text = text.replace(":", "%3A").replace(",", "%2C")
    return text


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="flake8-xla",
        description="Find PyTorch/XLA porting mistakes (the flake8-xla rules, without flake8's other checks).",
    )
    parser.add_argument("paths", nargs="*", default=["."], help="files and folders (default: .)")
    parser.add_argument("--select", help="comma-separated code prefixes to report (default: all XLA codes)")
    parser.add_argument("--ignore", help="comma-separated code prefixes not to report")
    parser.add_argument("--xla-scope", help="auto (default) or always (treat every module as XLA code)")
    parser.add_argument("--xla-version", help=f"torch_xla release to target (default {version_str(NEWEST_VERSION)})")
    parser.add_argument("--format", choices=FORMATS, help="output format (default: default)")
    parser.add_argument("--config", type=Path, help="pyproject.toml to read [tool.flake8-xla] from "
                        "(default: the nearest one above the current folder)")
    parser.add_argument("--version", action="version", version=f"flake8-xla {__version__}")
    fix.add_arguments(parser)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        config = read_config(args.config if args.config else find_pyproject(Path.cwd()))
        settings = Settings(
            scope=parse_scope(args.xla_scope or config.get("xla_scope", "auto")),
            target_version=parse_version(args.xla_version or config.get("xla_version", version_str(NEWEST_VERSION))),
        )
        fmt = args.format or config.get("format", "default")
        if fmt not in FORMATS:
            raise SettingsError(f"option --format: invalid value {fmt!r} (choose from {', '.join(map(repr, FORMATS))})")
    except SettingsError as exc:
        parser.exit(2, f"flake8-xla: error: {exc}\n")
    select = codes_list(args.select if args.select is not None else config.get("select"))
    ignore = codes_list(args.ignore if args.ignore is not None else config.get("ignore"))
    missing = [p for p in args.paths if not Path(p).exists()]
    if missing:
        parser.exit(2, f"flake8-xla: error: no such file or folder: {', '.join(missing)}\n")
    if fix.requested(args):  # --fix rewrites the files, then the lint below reports what remains
        status = fix.run(args, list(iter_files(args.paths)), settings, lambda code: selected(code, select, ignore))
        if status is not None:
            return status
    results = []
    for path in iter_files(args.paths):
        for line, col, code, message in lint_file(path, settings):
            if selected(code, select, ignore):
                results.append((str(path), line, col, code, message))
    out = sys.stdout
    if fmt == "json":
        json.dump([{"path": p, "line": line, "col": col, "code": code, "message": msg}
                   for p, line, col, code, msg in results], out, indent=2)
        out.write("\n")
    else:
        for p, line, col, code, msg in results:
            if fmt == "github":
                level = "error" if code in ("E902", "E999", "XLA000") or SEVERITY.get(code) == "E" else "warning"
                out.write(f"::{level} file={_github_escape(p, True)},line={line},col={col},"
                          f"title={code}::{_github_escape(f'{code} {msg}')}\n")
            else:
                out.write(f"{p}:{line}:{col}: {code} {msg}\n")
    return 1 if results else 0


if __name__ == "__main__":
    sys.exit(main())

__all__ = ["main", "SCOPES"]
