"""Standalone CLI: ``flake8-xla [PATH ...]`` or ``python -m flake8_xla`` (for Ruff users and CI).

Lints files and folders (``*.py`` and ``*.ipynb`` below a folder; a named file whatever its
suffix, a ``.ipynb`` one as a notebook; ``-`` for standard input) with the same engine as the flake8 plugin, and reports what
``flake8 --select=XLA`` would report in the same project: it reads the project's flake8
configuration (``exclude``, ``per-file-ignores``, ``ignore``... of ``[flake8]``), then
``[tool.flake8-xla]`` of pyproject.toml, then the command line (see :mod:`flake8_xla.cli.config`).
``# noqa`` / ``# noqa: XLA101`` and ``# flake8: noqa`` work exactly as under flake8, through
flake8's own noqa machinery. It also skips what git ignores (``--no-respect-gitignore``
to lint it), as Ruff does.

``flake8-xla rule XLA101`` prints a rule's page; ``flake8-xla --list-rules`` lists them;
``flake8-xla server`` is the language server (:mod:`flake8_xla.server`).

Adopting it on existing code: ``--write-baseline FILE`` records today's findings and
``--baseline FILE`` (option ``xla-baseline``, also in the config files and the plugins)
reports only new ones (:mod:`flake8_xla.baseline`); ``--add-noqa`` marks each finding's line
with ``# noqa: XLAnnn`` instead (:mod:`flake8_xla.cli.noqa`). ``--statistics`` counts the
findings per code after the report, as flake8's.

Exit status: 0 no findings (or ``--exit-zero``; ``--write-baseline`` and ``--add-noqa`` exit 0
when they wrote what they had to), 1 findings (a file that does not parse counts, as
``E999``), 2 usage error (bad option or config value, missing path) or a file ``--fix`` or
``--add-noqa`` could not write (after the report of what remains), or a baseline that could
not be written.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from pathlib import Path

from . import __version__, fix
from .baseline import dumps as baseline_bytes
from .baseline import entries as baseline_entries
from .baseline import load as baseline_load
from .cli import config as cfg
from .cli.files import DEFAULT_EXCLUDE, STDIN, Walker, lint, read_stdin
from .cli.output import FORMATS, WRITERS, level, rule_page, rule_url
from .cli.select import Selector
from .lines import universal_lines
from .notebook import is_notebook
from .registry import all_rules
from .settings import OPTIONS, SCOPES, SettingsError, from_options


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="flake8-xla",
        description="Find PyTorch/XLA porting mistakes (the flake8-xla rules, without flake8's other checks). "
                    "`flake8-xla rule XLA101` prints a rule's page; `flake8-xla server` is the language server.",
    )
    parser.add_argument("paths", nargs="*", help="files and folders (default: .); - reads standard input")
    group = parser.add_argument_group("what to report (as flake8's options; code prefixes, comma-separated)")
    group.add_argument("--select", metavar="CODES", help="report only these (default: every XLA code but the hints)")
    group.add_argument("--extend-select", metavar="CODES", help="report these too (--extend-select=XLA turns the hints on)")
    group.add_argument("--ignore", metavar="CODES", help="do not report these (replaces the default ignore list)")
    group.add_argument("--extend-ignore", metavar="CODES", help="do not report these either")
    group.add_argument("--per-file-ignores", metavar="PATTERN:CODES",
                       help="flake8's form: 'tests/*:XLA101,XLA8 scripts/*.py:XLA1'")
    group = parser.add_argument_group("which files")
    group.add_argument("--exclude", metavar="PATTERNS",
                       help=f"comma-separated names or paths to skip (default: {','.join(DEFAULT_EXCLUDE)})")
    group.add_argument("--extend-exclude", metavar="PATTERNS", help="more patterns to skip")
    group.add_argument("--respect-gitignore", action=argparse.BooleanOptionalAction, default=None,
                       help="skip what git ignores (.gitignore files, .git/info/exclude) while walking folders "
                            "(default: on)")
    group.add_argument("--stdin-filename", "--stdin-display-name", dest="stdin_filename", metavar="NAME",
                       help="the name of the file read from standard input (-): reported, and matched "
                            "against exclude and per-file-ignores")
    group = parser.add_argument_group("the rules")
    for opt in OPTIONS:
        flags = [f"--{opt.name}"] + (["--baseline"] if opt.name == "xla-baseline" else [])
        group.add_argument(*flags, dest=opt.name.replace("-", "_"), metavar=opt.metavar, help=opt.help)
    group.add_argument("--no-cache", dest="xla_cache", action="store_const", const="off",
                       help="the same as --xla-cache=off: project mode keeps no summaries between runs")
    group = parser.add_argument_group("output and configuration")
    group.add_argument("--format", choices=FORMATS, help="output format (default: default)")
    group.add_argument("--exit-zero", action="store_true", default=None, help="exit 0 even when there are findings")
    group.add_argument("--config", type=Path, metavar="FILE",
                       help="read only this file: a .toml file's [tool.flake8-xla], any other file's [flake8]")
    group.add_argument("--isolated", action="store_true", help="read no configuration file")
    group.add_argument("--list-rules", action="store_true", help="list every rule and exit")
    group.add_argument("--statistics", action="store_true",
                       help="after the findings, count them per code (as flake8's; on stderr with "
                            "--format=json or sarif)")
    group = parser.add_argument_group("adopting it on existing code")
    group.add_argument("--write-baseline", type=Path, metavar="FILE",
                       help="record today's findings in FILE (JSON) and exit 0; then --baseline FILE "
                            "reports only new ones")
    group.add_argument("--add-noqa", action="store_true",
                       help="append `# noqa: XLAnnn` to each finding's line (merged into an existing "
                            "`# noqa: ...`) and exit 0")
    parser.add_argument("--version", action="version", version=f"flake8-xla {__version__}")
    fix.add_arguments(parser)
    return parser


def _pick(args: argparse.Namespace, config: cfg.Config, key: str):
    """(value, folder its patterns are relative to) of one key: the command line's, else the config's."""
    value = getattr(args, key.replace("-", "_"), None)
    if value is not None:
        return value, Path.cwd()
    return config.get(key), config.base(key)


def _label(args: argparse.Namespace, config: cfg.Config, key: str) -> str:
    """Where the value of ``key`` comes from, as an error names it: ``option --KEY`` or the file's
    ``setup.cfg: [flake8] KEY``."""
    if getattr(args, key.replace("-", "_"), None) is not None or key not in config.values:
        return f"option --{key}"
    return config.label(key)


class _Parser(argparse.ArgumentParser):
    """argparse, whose errors are one line (``flake8-xla: error: ... (see flake8-xla --help)``)
    instead of the usage block and the error."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def list_rules(fmt: str, out, settings=None) -> int:
    """Every rule, one line each (``json``: a list of objects; ``url`` is null unless
    ``xla-docs-url`` is configured). Returns 0."""
    rules = all_rules()
    if fmt == "json":
        json.dump([{"code": code, "name": cls.name, "severity": level(code), "message": cls.message,
                    "fix": cls.fix, "versions": cls.versions, "hint": bool(getattr(cls, "hint", False)),
                    "url": rule_url(code, settings)} for code, cls in sorted(rules.items())], out, indent=2)
        out.write("\n")
        return 0
    width = max(len(cls.name) for cls in rules.values())
    for code, cls in sorted(rules.items()):
        out.write(f"{code}  {level(code):<7}  {cls.name:<{width}}  {cls.message}\n")
    return 0


def rule_main(argv: list[str]) -> int:
    """``flake8-xla rule CODE...``: each rule's page (markdown, as ``docs/rules/CODE.md``),
    followed by ``Docs: URL``: the page in this release's docs, or where ``xla-docs-url`` says.
    Exit 0, or 2 for an unknown rule or a configuration that cannot be used."""
    parser = _Parser(prog="flake8-xla rule", description="Print the page of a rule (as `ruff rule`).")
    parser.add_argument("codes", nargs="*", metavar="CODE", help="a code (XLA101) or a rule name")
    parser.add_argument("--all", action="store_true", help="every rule's page")
    parser.add_argument("--xla-docs-url", dest="xla_docs_url", metavar="URL",
                        help="the rule pages' URL template ({code}, {name}): print the page's URL too")
    parser.add_argument("--config", type=Path, metavar="FILE", help="read only this configuration file")
    parser.add_argument("--isolated", action="store_true", help="read no configuration file")
    args = parser.parse_args(argv)
    try:
        config = cfg.load(args.config, isolated=args.isolated)
        settings = from_options({"xla-docs-url": _pick(args, config, "xla-docs-url")[0]},
                                {"xla-docs-url": _label(args, config, "xla-docs-url")})
    except SettingsError as exc:
        parser.exit(2, f"flake8-xla rule: error: {exc}\n")
    rules = all_rules()
    by_name = {cls.name: code for code, cls in rules.items()}
    codes = sorted(rules) if args.all else []
    for raw in args.codes:
        code = raw.upper() if raw.upper() in rules else by_name.get(raw.lower())
        if code is None:
            parser.exit(2, f"flake8-xla rule: error: unknown rule {raw!r} (flake8-xla --list-rules lists them)\n")
        codes.append(code)
    if not codes:
        parser.exit(2, "flake8-xla rule: error: name a rule (XLA101) or pass --all\n")
    pages = []
    for code in codes:
        url = rule_url(code, settings)
        pages.append(rule_page(code).rstrip("\n") + (f"\n\nDocs: {url}" if url else "") + "\n")
    sys.stdout.write("\n".join(pages))
    return 0


def main(argv: list[str] | None = None) -> int:
    """The ``flake8-xla`` command: exit 0 clean, 1 findings, 2 usage error or a file ``--fix``
    could not write."""
    try:
        return _main(argv)
    except BrokenPipeError:  # `flake8-xla --list-rules | head`: the reader left; no traceback
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def _option_value(args: argparse.Namespace, config: cfg.Config, name: str):
    """The raw value of an engine option. ``xla-baseline`` set in a config file is a path
    relative to that file's folder: always in ``[tool.flake8-xla]``, and in ``[flake8]`` when
    it has a ``/`` (flake8's ``normalize_path``, as the plugin reads it there). With
    ``--write-baseline`` it is not read (the file may not exist yet)."""
    value, base = _pick(args, config, name)
    if name != "xla-baseline":
        return value
    if args.write_baseline is not None:
        return None
    if isinstance(value, str) and value.strip() and args.xla_baseline is None:
        if "[flake8]" in config.label(name):
            from flake8.utils import normalize_path

            return normalize_path(value.strip(), str(base))
        return str(base / value.strip())
    return value


def cuda_signs_of(path: str, text: str | None = None) -> list[str]:
    """What makes the file at ``path`` (its ``text`` when given: standard input) look like CUDA
    training, by :func:`flake8_xla.fix.cuda.cuda_signs` (a notebook: its code cells); empty
    when it imports torch_xla, shows no sign, or cannot be read. Never raises."""
    from .fix.cuda import cuda_signs
    from .project.files import read_regular

    try:
        if text is None:
            data, _ = read_regular(path)
            if data is None:
                return []
            text = data.decode("utf-8-sig", errors="replace")
        if is_notebook(path) and text.lstrip().startswith("{"):
            from .notebook import parse

            text = "".join(parse(text).module_lines())
    except Exception:  # unreadable, not a notebook: the lint reported it (E902) or found nothing
        return []
    return cuda_signs(text)


def cuda_note(files: list[tuple[str, list[str]]]) -> str:
    """The one line that says why CUDA training scripts got no finding in scope ``auto``: the
    first file and its signs, and how many more."""
    (first, signs), more = files[0], len(files) - 1
    who = f"{first} does not" if not more else f"{first} and {_count(more, 'more file')} do not"
    return (f"flake8-xla: note: {who} import torch_xla but look{'s' if not more else ''} like CUDA training "
            f"({', '.join(signs)}): xla-scope = auto lints only XLA code; --xla-scope=always lints "
            f"{'it' if not more else 'them'} as XLA code (and --fix --unsafe-fixes --xla-scope=always ports "
            f"{'it' if not more else 'them'})\n")


def statistics(results: list, out) -> None:
    """flake8's ``--statistics``: per code (sorted), the count and the message of its first
    finding (files in name order), as ``COUNT CODE MESSAGE`` with the count padded to 5."""
    first: dict[str, tuple] = {}
    counts: dict[str, int] = {}
    for r in sorted(results, key=lambda r: (r.path, r.line, r.col)):
        counts[r.code] = counts.get(r.code, 0) + 1
        first.setdefault(r.code, r.message)
    for code in sorted(counts):
        out.write(f"{counts[code]:<5} {code} {first[code]}\n")


def _main(argv: list[str] | None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["rule"]:
        return rule_main(argv[1:])
    if argv[:1] == ["server"]:
        from .server import main as server_main

        return server_main(argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    for flag, given in (("--add-noqa", args.add_noqa), ("--write-baseline", args.write_baseline is not None)):
        if given and fix.requested(args):
            parser.exit(2, f"flake8-xla: error: {flag} cannot be combined with --fix or --diff\n")
    if args.add_noqa and args.write_baseline is not None:
        parser.exit(2, "flake8-xla: error: choose one of --add-noqa and --write-baseline\n")
    if getattr(args, "show_fixes", False) and not fix.requested(args):
        parser.exit(2, "flake8-xla: error: --show-fixes needs --fix or --diff\n")
    try:
        config = cfg.load(args.config, isolated=args.isolated)
        settings = from_options({opt.name: _option_value(args, config, opt.name) for opt in OPTIONS},
                                {opt.name: _label(args, config, opt.name) for opt in OPTIONS})
        fmt = _pick(args, config, "format")[0] or "default"
        if fmt not in FORMATS:
            raise SettingsError(f"{_label(args, config, 'format')}: invalid value {fmt!r} "
                                f"(choose from {', '.join(map(repr, FORMATS))})")
        if args.list_rules:
            return list_rules(fmt, sys.stdout, settings)
        exclude_value, exclude_base = _pick(args, config, "exclude")
        exclude = cfg.as_patterns(exclude_value, exclude_base) if exclude_value is not None else list(DEFAULT_EXCLUDE)
        exclude += cfg.as_patterns(*_pick(args, config, "extend-exclude"))
        pfi_value, pfi_base = _pick(args, config, "per-file-ignores")
        selector = Selector(
            select=cfg.as_codes(_pick(args, config, "select")[0]),
            ignore=cfg.as_codes(_pick(args, config, "ignore")[0]),
            extend_select=cfg.as_codes(_pick(args, config, "extend-select")[0]) or [],
            extend_ignore=cfg.as_codes(_pick(args, config, "extend-ignore")[0]) or [],
            per_file_ignores=cfg.as_per_file_ignores(pfi_value, pfi_base, _label(args, config, "per-file-ignores")),
        )
        # a rule not reported supersedes nothing: --select=XLA805 alone reports every xm.mark_step()
        settings = dataclasses.replace(settings, unreported=selector.unreported())
        respect_gitignore = _pick(args, config, "respect-gitignore")[0]
        exit_zero = bool(_pick(args, config, "exit-zero")[0])
        # (none with --write-baseline: it records every finding, whatever baseline is configured)
        baseline = baseline_load(settings.baseline) if settings.baseline else None
    except SettingsError as exc:
        parser.exit(2, f"flake8-xla: error: {exc}\n")
    paths = args.paths or ([STDIN] if args.stdin_filename else ["."])
    missing = [p for p in paths if p != STDIN and not Path(p).exists()]
    if missing:
        parser.exit(2, f"flake8-xla: error: no such file or folder: {', '.join(missing)}\n")
    if args.add_noqa and STDIN in paths:
        parser.exit(2, "flake8-xla: error: --add-noqa edits files: it cannot read standard input (-)\n")
    walker = Walker(exclude, respect_gitignore=respect_gitignore is not False)

    def reported(display: str, found: list) -> list:
        kept = [r for r in found if selector.reported(display, r.code)]
        return baseline.new(display, kept, lambda r: r.text) if baseline is not None else kept

    not_written = 0
    outcome = None  # --fix: what it did (its summary follows the report of what remains)
    if fix.requested(args):  # --fix rewrites the files, then the lint below reports what remains
        if args.fix and STDIN in paths and len(paths) > 1:
            parser.exit(2, "flake8-xla: error: --fix with - (standard input) prints the fixed text: "
                           "name no other path\n")
        targets = list(walker.files(paths, args.stdin_filename))
        if args.fix and paths == [STDIN] and not targets:  # excluded: the text goes back as it came (Ruff)
            sys.stdout.flush()
            sys.stdout.buffer.write(sys.stdin.buffer.read())
            return 0
        outcome = fix.run(args, targets, settings, selector.reported, stdin_name=args.stdin_filename,
                          excluded=walker.excluded, summary=False)  # its summary: after the lint below
        if outcome.status is not None:
            return outcome.status
        if outcome.stdin_text is not None:  # stdout holds the fixed text: what remains goes to stderr
            display = args.stdin_filename or "stdin"
            notebook = args.stdin_filename if is_notebook(args.stdin_filename) else None
            results = reported(display, lint(display, settings, universal_lines(outcome.stdin_text), filename=notebook))
            WRITERS[fmt](results, sys.stderr, settings)
            if args.statistics:
                statistics(results, sys.stderr)
            sys.stderr.write(outcome.summary(len(results)))
            return 1 if results and not exit_zero else 0
        not_written = outcome.not_written
    results = []
    # a plain lint in scope auto: the files it left silent that look like CUDA training
    note_cuda = settings.scope == "auto" and outcome is None and not args.add_noqa and args.write_baseline is None
    cuda_files: list[tuple[str, list[str]]] = []
    for path in walker.files(paths, args.stdin_filename):
        text = None
        if path == STDIN:
            display = args.stdin_filename or "stdin"
            lines = read_stdin()
            text = "".join(lines)
            found = lint(display, settings, lines, filename=args.stdin_filename)
        else:
            display = path
            found = lint(path, settings)
        kept = reported(display, found)
        results.extend(kept)
        if note_cuda and not kept:
            signs = cuda_signs_of(path, text)
            if signs:
                cuda_files.append((display, signs))
    if args.write_baseline is not None:
        return _write_baseline(args.write_baseline, results)
    if args.add_noqa:
        from .cli.noqa import add_noqa

        lines_changed, files, failed = add_noqa(results, sys.stderr)
        sys.stderr.write(f"flake8-xla: added noqa codes to {_count(lines_changed, 'line')} in "
                         f"{_count(files, 'file')}" + (f", {_count(failed, 'file')} not written" if failed else "")
                         + "\n")
        return 2 if failed else 0
    try:
        WRITERS[fmt](results, sys.stdout, settings)
        if args.statistics:
            statistics(results, sys.stdout if fmt in ("default", "github") else sys.stderr)
        sys.stdout.flush()
    except BrokenPipeError:  # `flake8-xla | head`: the reader left; no traceback
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    if cuda_files:  # once per run, on stderr: stdout and the exit status are the lint's
        sys.stderr.write(cuda_note(cuda_files))
    if outcome is not None:  # `--fix .`: what remains is what was just reported (each file once)
        sys.stderr.write(outcome.summary(len({(os.path.realpath(r.path), r.line, r.col, r.code, r.message)
                                              for r in results})))
    if not_written:  # --fix could not write a file (its line is on stderr)
        return 2
    return 1 if results and not exit_zero else 0


def _count(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _write_baseline(file: Path, results: list) -> int:
    """``--write-baseline FILE``: record ``results`` there (:mod:`flake8_xla.baseline`); 0, or
    2 with one line on stderr when the file cannot be written."""
    document = baseline_entries(file, ((r.path, r.code, r.text) for r in results))
    try:
        fix.write_file(file, baseline_bytes(document))
    except (fix.NotFixed, OSError) as exc:
        why = str(exc) if isinstance(exc, fix.NotFixed) else (exc.strerror or str(exc))
        sys.stderr.write(f"flake8-xla: error: cannot write the baseline {file}: {why}\n")
        return 2
    recorded = sum(entry["count"] for entry in document["findings"])
    sys.stderr.write(f"flake8-xla: recorded {_count(recorded, 'finding')} in {file}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

__all__ = ["main", "SCOPES"]
