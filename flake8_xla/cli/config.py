"""The CLI's configuration: command line over ``[tool.flake8-xla]`` over ``[flake8]``.

Layers, lowest first; a key set in a higher layer replaces the same key below it:

1. ``[flake8]`` of the flake8 config file flake8 itself would read (``setup.cfg``,
   ``tox.ini`` or ``.flake8``, searched from the current folder up, as flake8 searches):
   only the keys that decide *which* XLA findings a flake8 run reports -- ``exclude``,
   ``extend-exclude``, ``per-file-ignores``, ``ignore``, ``extend-ignore`` -- and the
   plugin's own options (``xla-scope``, ``xla-version``, ...). So in a project that already
   configures flake8, ``flake8-xla`` reports what ``flake8 --select=XLA`` reports.
   ``select`` / ``extend-select`` there choose among all of flake8's checks and are not read.
2. ``[tool.flake8-xla]`` of the nearest ``pyproject.toml`` (from the current folder up) that
   has that table: every key of the command line.
3. The command line.

``--config FILE`` reads that one file instead (a ``.toml`` file for ``[tool.flake8-xla]``,
anything else for ``[flake8]``); ``--isolated`` reads none.

Patterns that contain a ``/`` are relative to the folder of the file that sets them (the
current folder for the command line), as flake8 resolves ``exclude``.
"""

from __future__ import annotations

import configparser
import sys
from dataclasses import dataclass, field
from pathlib import Path

from ..settings import OPTIONS, SettingsError

#: keys of [tool.flake8-xla] besides the engine's OPTIONS (the same names as the CLI's options)
CLI_KEYS = ("select", "extend-select", "ignore", "extend-ignore", "exclude", "extend-exclude",
            "per-file-ignores", "respect-gitignore", "exit-zero", "format")
#: keys the CLI takes from flake8's [flake8] section
FLAKE8_KEYS = ("exclude", "extend-exclude", "per-file-ignores", "ignore", "extend-ignore")
LIST_KEYS = ("select", "extend-select", "ignore", "extend-ignore", "exclude", "extend-exclude")
BOOL_KEYS = ("respect-gitignore", "exit-zero")


def option_names() -> tuple[str, ...]:
    return tuple(opt.name for opt in OPTIONS)


@dataclass
class Config:
    """Raw values by key (``exclude``, ``xla-version``...), the folder each one is relative
    to, and the files read (for ``--show-config``-like messages and errors)."""

    values: dict[str, object] = field(default_factory=dict)
    dirs: dict[str, Path] = field(default_factory=dict)
    files: list[Path] = field(default_factory=list)

    def set(self, key: str, value: object, base: Path) -> None:
        self.values[key] = value
        self.dirs[key] = base

    def get(self, key: str, default: object = None) -> object:
        return self.values.get(key, default)

    def base(self, key: str) -> Path:
        return self.dirs.get(key, Path.cwd())


def _toml():
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    return tomllib


def read_pyproject_table(path: Path) -> dict | None:
    """``[tool.flake8-xla]`` of one pyproject.toml (``None`` when it has no such table)."""
    tomllib = _toml()
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise SettingsError(f"{path}: cannot read: {exc}") from None
    section = data.get("tool", {}).get("flake8-xla")
    if section is None:
        return None
    if not isinstance(section, dict):
        raise SettingsError(f"{path}: [tool.flake8-xla] must be a table")
    return section


def find_pyproject(start: Path) -> Path | None:
    """The nearest pyproject.toml, from ``start`` up, that has a ``[tool.flake8-xla]`` table."""
    for folder in [start, *start.parents]:
        candidate = folder / "pyproject.toml"
        if candidate.is_file() and read_pyproject_table(candidate) is not None:
            return candidate
    return None


def find_flake8_config(start: Path) -> Path | None:
    """The file flake8 reads its config from: in each folder from ``start`` up (stopping
    below the home folder, as flake8), the first of ``setup.cfg``, ``tox.ini``, ``.flake8``
    that has a ``[flake8]`` section."""
    home = Path.home()
    folder = start
    while True:
        for name in ("setup.cfg", "tox.ini", ".flake8"):
            candidate = folder / name
            if candidate.is_file() and _read_ini(candidate, quiet=True) is not None:
                return candidate
        parent = folder.parent
        if parent == folder or parent == home:
            return None
        folder = parent


def _read_ini(path: Path, quiet: bool = False) -> dict | None:
    parser = configparser.RawConfigParser()
    try:
        parser.read(path, encoding="UTF-8")
    except (UnicodeDecodeError, configparser.Error) as exc:
        if quiet:
            return None  # flake8 skips an unparseable candidate too
        raise SettingsError(f"{path}: cannot read: {exc}") from None
    if "flake8" not in parser:
        return None
    return dict(parser["flake8"])


def _norm(key: str) -> str:
    return str(key).strip().replace("_", "-")


def apply_flake8_section(config: Config, path: Path) -> None:
    section = _read_ini(path)
    if section is None:
        return
    config.files.append(path)
    wanted = set(FLAKE8_KEYS) | set(option_names())
    for key, value in section.items():
        norm = _norm(key)
        if norm in wanted:
            config.set(norm, value, path.parent)


def apply_pyproject(config: Config, path: Path, required: bool = False) -> None:
    section = read_pyproject_table(path)
    if section is None:
        if required:
            raise SettingsError(f"{path}: no [tool.flake8-xla] table")
        return
    config.files.append(path)
    known = set(CLI_KEYS) | set(option_names())
    for key, value in section.items():
        norm = _norm(key)
        if norm not in known:
            raise SettingsError(f"{path}: [tool.flake8-xla] unknown key {key!r} (known: {', '.join(sorted(known))})")
        if norm in BOOL_KEYS and not isinstance(value, bool):
            raise SettingsError(f"{path}: [tool.flake8-xla] {key} must be true or false, not {value!r}")
        config.set(norm, value, path.parent)


def load(config_file: Path | None = None, isolated: bool = False, cwd: Path | None = None) -> Config:
    """The configuration layers below the command line (see the module docstring)."""
    cwd = cwd or Path.cwd()
    config = Config()
    if isolated:
        return config
    if config_file is not None:
        if not config_file.is_file():
            raise SettingsError(f"option --config: no such file: {config_file}")
        if config_file.suffix == ".toml":
            apply_pyproject(config, config_file.resolve(), required=True)
        elif _read_ini(config_file) is None:
            raise SettingsError(f"{config_file}: no [flake8] section")
        else:
            apply_flake8_section(config, config_file.resolve())
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


def as_per_file_ignores(value: object, base: Path, where: str) -> list[tuple[str, list[str]]]:
    """``(pattern, codes)`` pairs from flake8's string form (``"tests/*:XLA101,XLA8 x.py:XLA1"``)
    or a TOML table (``{"tests/*" = ["XLA101"]}``); patterns normalised as exclude's."""
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
            raise SettingsError(f"{where}per-file-ignores: {first}") from None
    else:
        raise SettingsError(f"{where}per-file-ignores must be a table or a string")
    return [(normalize_path(pattern, str(base)), [c.upper() for c in codes]) for pattern, codes in pairs]
