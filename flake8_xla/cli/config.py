"""The CLI's configuration: command line over ``[tool.flake8-xla]`` over ``[flake8]``.

Layers, lowest first; a key set in a higher layer replaces the same key below it:

1. ``[flake8]`` of the flake8 config file flake8 itself would read (``setup.cfg``,
   ``tox.ini`` or ``.flake8``, searched from the current folder up, as flake8 searches):
   only the keys that decide *which* XLA findings a flake8 run reports -- ``exclude``,
   ``extend-exclude``, ``per-file-ignores``, ``ignore``, ``extend-ignore``,
   ``extend-select`` (``extend-select = XLA`` turns the hints on, as under flake8) -- and the
   plugin's own options (``xla-scope``, ``xla-version``, ...). So in a project that already
   configures flake8, ``flake8-xla`` reports what ``flake8 --select=XLA`` reports.
   ``select`` there chooses among all of flake8's checks (``select = E,W,F`` would turn the
   XLA rules off) and is not read.
2. ``[tool.flake8-xla]`` of the nearest ``pyproject.toml`` (from the current folder up to the
   project root, the nearest folder with ``.git`` or ``.hg``) that has that table: every key of
   the command line, each type-checked (:data:`TOML_TYPES`).
3. The command line.

``--config FILE`` reads that one file instead (a ``.toml`` file for ``[tool.flake8-xla]``,
anything else for ``[flake8]``); ``--isolated`` reads none.

Patterns that contain a ``/`` are relative to the folder of the file that sets them (the
current folder for the command line), as flake8 resolves ``exclude``.

A file that is read but cannot be used raises :class:`~flake8_xla.settings.SettingsError`,
one line naming the file and the key or line (the CLI prints it and exits 2).
"""

from __future__ import annotations

import ast
import configparser
import datetime
import io
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from ..settings import OPTIONS, SettingsError

#: keys of [tool.flake8-xla] besides the engine's OPTIONS (the same names as the CLI's options)
CLI_KEYS = ("select", "extend-select", "ignore", "extend-ignore", "exclude", "extend-exclude",
            "per-file-ignores", "respect-gitignore", "exit-zero", "format")
#: keys the CLI takes from flake8's [flake8] section
FLAKE8_KEYS = ("exclude", "extend-exclude", "per-file-ignores", "ignore", "extend-ignore", "extend-select")
LIST_KEYS = ("select", "extend-select", "ignore", "extend-ignore", "exclude", "extend-exclude")
BOOL_KEYS = ("respect-gitignore", "exit-zero")

STRING, BOOL, STRINGS, MAPPING = ("a string", "true or false", "a string or a list of strings",
                                  "a string, a list of strings or a table")
#: what each key of [tool.flake8-xla] takes (the TOML types of what flake8 takes on its command line)
TOML_TYPES: dict[str, str] = {
    **{key: STRINGS for key in LIST_KEYS}, **{key: BOOL for key in BOOL_KEYS},
    "per-file-ignores": MAPPING, "format": STRING,
    **{opt.name: STRINGS if opt.multiple else STRING for opt in OPTIONS},
}
#: folders that mark a project's root: the pyproject.toml search stops there (as Black's)
ROOT_MARKERS = (".git", ".hg")


class IniError(SettingsError):
    """A config file configparser cannot read; ``flake8_stops``: flake8 stops on it too (a
    duplicate key or section) rather than skipping it."""

    def __init__(self, message: str, flake8_stops: bool = False) -> None:
        super().__init__(message)
        self.flake8_stops = flake8_stops


def option_names() -> tuple[str, ...]:
    return tuple(opt.name for opt in OPTIONS)


@dataclass
class Config:
    """Raw values by key (``exclude``, ``xla-version``...), the folder each one is relative
    to, where each one was set (``setup.cfg: [flake8] exclude``, for errors), and the files read."""

    values: dict[str, object] = field(default_factory=dict)
    dirs: dict[str, Path] = field(default_factory=dict)
    files: list[Path] = field(default_factory=list)
    labels: dict[str, str] = field(default_factory=dict)

    def set(self, key: str, value: object, base: Path, label: str | None = None) -> None:
        self.values[key] = value
        self.dirs[key] = base
        self.labels[key] = label or f"--{key}"

    def get(self, key: str, default: object = None) -> object:
        return self.values.get(key, default)

    def base(self, key: str) -> Path:
        return self.dirs.get(key, Path.cwd())

    def label(self, key: str) -> str:
        """Where ``key`` was set, as errors name it: ``pyproject.toml: [tool.flake8-xla] xla-scope``
        (``--key`` when it was not set by a file)."""
        return self.labels.get(key, f"--{key}")


def _toml():
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    return tomllib


def shown(path: Path) -> str:
    """``path`` as errors show it: relative to the current folder when below it, else absolute."""
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        return str(path)
    return str(path) if rel == ".." or rel.startswith(".." + os.sep) else rel


def _read_text(path: Path) -> str:
    """The file's text, decoded as UTF-8 (as flake8 and tomllib decode); :class:`SettingsError`
    naming the file (and the line of the first bad byte) otherwise."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SettingsError(f"{shown(path)}: cannot read: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise SettingsError(f"{shown(path)}: line {line}: not UTF-8 (byte 0x{data[exc.start]:02x})") from None


def _type_name(value: object) -> str:
    for kind, name in ((bool, "boolean"), (int, "integer"), (float, "float"), (str, "string"), (list, "list"),
                       (dict, "table"), (datetime.datetime, "date-time"), (datetime.date, "date"),
                       (datetime.time, "time")):
        if isinstance(value, kind):
            return name
    return type(value).__name__


def _is_strings(value: object) -> bool:
    return isinstance(value, str) or (isinstance(value, list) and all(isinstance(v, str) for v in value))


def _got(value: object) -> str:
    if isinstance(value, list):
        odd = next((v for v in value if not isinstance(v, str)), None)
        if odd is not None or not value:
            return f"list containing {_type_name(odd)}" if odd is not None else "list"
    return _type_name(value)


def type_error(key: str, value: object) -> str | None:
    """Why ``value`` (as TOML gave it) is the wrong type for ``key`` of ``[tool.flake8-xla]``
    (``format: expected a string, got list``), or ``None`` when it is the right type."""
    norm = _norm(key)
    want = TOML_TYPES[norm]
    if want == STRING:
        ok = isinstance(value, str)
    elif want == BOOL:
        ok = isinstance(value, bool)
    elif want == STRINGS:
        ok = _is_strings(value)
    else:  # per-file-ignores: flake8's string, its lines as a list, or {pattern = codes}
        if isinstance(value, dict):
            for pattern, codes in value.items():
                if not _is_strings(codes):
                    return f"{key}.{pattern!r}: expected {STRINGS}, got {_got(codes)}"
            return None
        ok = _is_strings(value)
    if ok:
        return None
    hint = ' (write the release as a string, e.g. "2.7")' if norm == "xla-version" and isinstance(
        value, (int, float)) and not isinstance(value, bool) else ""
    return f"{key}: expected {want}, got {_got(value)}{hint}"


def read_pyproject_table(path: Path) -> dict | None:
    """``[tool.flake8-xla]`` of one pyproject.toml (``None`` when it has no such table).

    Raises :class:`SettingsError`, one line naming the file, when the file cannot be read, is
    not UTF-8 or not TOML, or its ``tool`` or ``tool.flake8-xla`` is not a table."""
    tomllib = _toml()
    text = _read_text(path)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"{shown(path)}: invalid TOML: {str(exc).splitlines()[0]}") from None
    tool = data.get("tool", {})
    if not isinstance(tool, dict):
        raise SettingsError(f"{shown(path)}: tool: expected a table, got {_type_name(tool)}")
    section = tool.get("flake8-xla")
    if section is None:
        return None
    if not isinstance(section, dict):
        raise SettingsError(f"{shown(path)}: tool.flake8-xla: expected a table, got {_type_name(section)}")
    return section


def find_pyproject(start: Path) -> Path | None:
    """The nearest pyproject.toml, from ``start`` up to the project root, that has a
    ``[tool.flake8-xla]`` table. The project root is the nearest folder with ``.git`` or ``.hg``
    (the search goes up to the file system's root when there is none); nothing above it is read,
    so another project's pyproject.toml further up neither applies nor breaks the run. Raises
    :class:`SettingsError` for a pyproject.toml on the way that cannot be read (it may be the one
    meant to configure this run)."""
    for folder in [start, *start.parents]:
        candidate = folder / "pyproject.toml"
        if candidate.is_file() and read_pyproject_table(candidate) is not None:
            return candidate
        if any(_exists(folder / marker) for marker in ROOT_MARKERS):
            return None
    return None


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except OSError:  # a folder we may not look into
        return False


def _flake8_intended(path: Path) -> bool:
    """Whether a config file that does not parse was meant for flake8: ``.flake8``, or a file
    with a ``[flake8]`` (or ``[flake8:local-plugins]``) section header."""
    if path.name == ".flake8":
        return True
    try:
        text = path.read_bytes().decode("utf-8", errors="replace")
    except OSError:
        return True
    return re.search(r"^[\ufeff\s]*\[flake8(:local-plugins)?\]", text, re.MULTILINE) is not None


def find_flake8_config(start: Path) -> Path | None:
    """The file flake8 reads its config from: in each folder from ``start`` up (stopping
    below the home folder, as flake8), the first of ``setup.cfg``, ``tox.ini``, ``.flake8``
    that has a ``[flake8]`` section.

    A candidate that does not parse is skipped when flake8 skips it (a syntax error, no
    section header, or bad bytes, in a file that is not ``.flake8`` and has no ``[flake8]``
    header: another tool's file). Otherwise -- a duplicate key or section, on which flake8
    stops too, or a broken file meant for flake8, whose excludes and per-file-ignores would be
    lost -- raises :class:`SettingsError` naming the file, the line and the problem."""
    home = Path.home()
    folder = start
    while True:
        for name in ("setup.cfg", "tox.ini", ".flake8"):
            candidate = folder / name
            if not candidate.is_file():
                continue
            try:
                parser = _read_ini(candidate)
            except SettingsError as exc:
                if getattr(exc, "flake8_stops", False) or _flake8_intended(candidate):
                    raise
                continue
            if "flake8" in parser or "flake8:local-plugins" in parser:
                return candidate
        parent = folder.parent
        if parent == folder or parent == home:
            return None
        folder = parent


def _ini_problem(exc: configparser.Error) -> str:
    """One line for a configparser error: ``line 3: duplicate key 'exclude' in [flake8]``."""
    if isinstance(exc, configparser.DuplicateOptionError):
        return f"line {exc.lineno}: duplicate key {exc.option!r} in [{exc.section}]"
    if isinstance(exc, configparser.DuplicateSectionError):
        return f"line {exc.lineno}: duplicate section [{exc.section}]"
    if isinstance(exc, configparser.MissingSectionHeaderError):
        return f"line {exc.lineno}: no section header before {exc.line.strip()!r}"
    if isinstance(exc, configparser.ParsingError) and exc.errors:
        lineno, line = exc.errors[0][:2]
        if isinstance(line, str) and line[:1] in "'\"":  # configparser keeps the line's repr
            try:
                line = ast.literal_eval(line)
            except (ValueError, SyntaxError):
                pass
        return f"line {lineno}: cannot parse {str(line).strip()!r}"
    return str(exc).splitlines()[0]


def _read_ini(path: Path) -> configparser.RawConfigParser:
    """The parsed file, read as flake8 reads it (UTF-8, :class:`configparser.RawConfigParser`).

    Raises :class:`SettingsError` naming the file and the problem (an :class:`IniError` when
    configparser refuses the text)."""
    text = _read_text(path)
    parser = configparser.RawConfigParser()
    try:
        parser.read_file(io.StringIO(text, newline=None), source=str(path))
    except configparser.Error as exc:
        fatal = isinstance(exc, (configparser.DuplicateOptionError, configparser.DuplicateSectionError))
        raise IniError(f"{shown(path)}: {_ini_problem(exc)}", fatal) from None
    return parser


def _norm(key: str) -> str:
    return str(key).strip().replace("_", "-")


def apply_flake8_section(config: Config, path: Path, parser: configparser.RawConfigParser | None = None) -> None:
    """Set the keys the CLI takes from ``[flake8]`` of ``path`` (read unless ``parser`` is given)."""
    parser = parser if parser is not None else _read_ini(path)
    if "flake8" not in parser:
        return
    config.files.append(path)
    wanted = set(FLAKE8_KEYS) | set(option_names())
    for key, value in parser["flake8"].items():
        norm = _norm(key)
        if norm in wanted:
            config.set(norm, value, path.parent, f"{shown(path)}: [flake8] {key}")


def apply_pyproject(config: Config, path: Path, required: bool = False) -> None:
    """Set every key of ``[tool.flake8-xla]`` of ``path``, each checked against :data:`TOML_TYPES`.
    Raises :class:`SettingsError` for an unknown key or a wrong-typed value (and, with
    ``required``, when the file has no such table)."""
    section = read_pyproject_table(path)
    if section is None:
        if required:
            raise SettingsError(f"{shown(path)}: no [tool.flake8-xla] table")
        return
    config.files.append(path)
    known = set(CLI_KEYS) | set(option_names())
    for key, value in section.items():
        norm = _norm(key)
        if norm not in known:
            raise SettingsError(f"{shown(path)}: [tool.flake8-xla] unknown key {key!r} "
                                f"(known: {', '.join(sorted(known))})")
        problem = type_error(key, value)
        if problem is not None:
            raise SettingsError(f"{shown(path)}: [tool.flake8-xla] {problem}")
        config.set(norm, value, path.parent, f"{shown(path)}: [tool.flake8-xla] {key}")


def load(config_file: Path | None = None, isolated: bool = False, cwd: Path | None = None) -> Config:
    """The configuration layers below the command line (see the module docstring).
    Raises :class:`SettingsError` (one line naming the file and the key or line) when a file
    that is read cannot be used."""
    cwd = cwd or Path.cwd()
    config = Config()
    if isolated:
        return config
    if config_file is not None:
        if not config_file.is_file():
            raise SettingsError(f"option --config: no such file: {config_file}")
        if config_file.suffix == ".toml":
            apply_pyproject(config, config_file.resolve(), required=True)
            return config
        parser = _read_ini(config_file.resolve())
        if "flake8" not in parser:
            raise SettingsError(f"{config_file}: no [flake8] section")
        apply_flake8_section(config, config_file.resolve(), parser)
        return config
    flake8_file = find_flake8_config(cwd)
    if flake8_file is not None:
        apply_flake8_section(config, flake8_file)
    pyproject = find_pyproject(cwd)
    if pyproject is not None:
        apply_pyproject(config, pyproject)
    return config


def as_list(value: object) -> list[str]:
    """A list key's items: a TOML list, or a comma/whitespace-separated string as flake8's."""
    if value is None:
        return []
    if isinstance(value, str):
        from flake8.utils import parse_comma_separated_list

        return parse_comma_separated_list(value)
    if isinstance(value, (list, tuple)):
        return [str(v).strip() for v in value if str(v).strip()]
    return [str(value)]


def as_codes(value: object) -> list[str] | None:
    return None if value is None else [c.upper() for c in as_list(value)]


def as_patterns(value: object, base: Path) -> list[str]:
    """Exclude patterns, each with a ``/`` made absolute from ``base`` (flake8's normalize_paths)."""
    from flake8.utils import normalize_paths

    return normalize_paths(as_list(value), str(base))


def as_per_file_ignores(value: object, base: Path, label: str = "option --per-file-ignores") -> list[tuple[str, list[str]]]:
    """``(pattern, codes)`` pairs from flake8's string form (``"tests/*:XLA101,XLA8 x.py:XLA1"``)
    or a TOML table (``{"tests/*" = ["XLA101"]}``); patterns normalised as exclude's. Raises
    :class:`SettingsError` starting with ``label`` (where the value was set) when flake8 would refuse it."""
    from flake8.exceptions import ExecutionError
    from flake8.utils import normalize_path, parse_files_to_codes_mapping

    if value is None:
        return []
    if isinstance(value, dict):
        pairs = [(str(k), as_codes(v) or []) for k, v in value.items()]
    elif isinstance(value, (str, list, tuple)):
        try:
            pairs = parse_files_to_codes_mapping(value if isinstance(value, str) else [str(v) for v in value])
        except ExecutionError as exc:
            first = str(exc).splitlines()[0]
            raise SettingsError(f"{label}: {first}") from None
    else:
        raise SettingsError(f"{label}: expected {MAPPING}, got {_type_name(value)}")
    return [(normalize_path(pattern, str(base)), [c.upper() for c in codes]) for pattern, codes in pairs]
