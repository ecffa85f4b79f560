"""Settings shared by every adapter (flake8, pylint, CLI).

Each adapter builds one :class:`Settings` from its host's options and hands it to
:func:`flake8_xla.engine.run`. Values are validated here, once, so every host reports a
bad value with the same one-line message.
"""

from __future__ import annotations

import dataclasses
import re
import string
import sys
from typing import Callable, Mapping

from . import __version__, docs_url as release_docs_url

#: torch_xla releases the rules know, oldest first. The last one is the default target.
KNOWN_VERSIONS: tuple[tuple[int, int], ...] = tuple((2, minor) for minor in range(10))
NEWEST_VERSION = KNOWN_VERSIONS[-1]
SCOPES = ("auto", "always")
PROJECT_MODES = ("on", "off")
CACHE_MODES = ("on", "off")
#: the rule pages' URL template when none is configured: the page ``docs/rules/XLA101.md`` of
#: the installed release, in the project's tree at its tag (:func:`flake8_xla.docs_url`), so a
#: link never shows another version's page; ``xla-docs-url`` points them elsewhere (a fork's own)
DEFAULT_DOCS_URL: str = release_docs_url("docs/rules/{code}.md")
#: the page the default links an unknown code (``XLA000``) to: the index of the rules
DEFAULT_INDEX_URL: str = release_docs_url("docs/index.md")
#: the fields a docs URL template may name
DOCS_URL_FIELDS = ("code", "name")


class SettingsError(ValueError):
    """A bad option value; ``str(err)`` is one line naming the option and the accepted values."""


@dataclasses.dataclass(frozen=True)
class Settings:
    """What one lint run is asked to do.

    Attributes:
        scope: ``"auto"`` (XLA-context rules only in modules that import torch_xla) or
            ``"always"`` (every module is XLA code, for porting a CUDA script).
        target_version: the torch_xla release targeted, as ``(major, minor)``.
        reducing_calls: in-house helpers that all-reduce gradients (``xla-reducing-calls``):
            a call to one in XLA code counts as gradient reduction (XLA201 stays silent).
        launchers: in-house launch wrappers whose first argument (or ``fn=``) is the
            launched function (``xla-launchers``), like ``torch_xla.launch``.
        docs_url: the rule pages' URL template (``{code}``, ``{name}``), see
            :func:`flake8_xla.registry.doc_url` (default :data:`DEFAULT_DOCS_URL`, this
            release's pages), or ``None`` (no URLs); one :func:`parse_docs_url` refuses
            raises :class:`SettingsError`.
        project: ``"on"`` (project mode: read the source of the linted file's project
            modules, parse only) or ``"off"`` (each file alone), option ``xla-project``.
        baseline: the baseline file (option ``xla-baseline``, see :mod:`flake8_xla.baseline`)
            whose findings the hosts do not report, or ``None``; the engine does not read it.
        cache: ``"on"`` (project mode keeps module summaries between runs in the user cache
            folder, :mod:`flake8_xla.project.cache`) or ``"off"``, option ``xla-cache``.
        unreported: rule codes the host will not report (its ``select`` / ``ignore``; set
            by the flake8 plugin and the CLI, not an option): a finding of one of them does
            not supersede another rule's finding ("one finding per fix"), so
            ``--select=XLA805`` alone reports every ``xm.mark_step()``.

    ``reducing_calls`` and ``launchers`` hold dotted names: ``mylib.dist.sync_grads``
    matches a call whose name resolves (through imports) to it; a name without a dot,
    ``sync_grads``, matches any call of that name (a module function, an imported one, a
    method).
    """

    scope: str = "auto"
    target_version: tuple[int, int] = NEWEST_VERSION
    reducing_calls: tuple[str, ...] = ()
    launchers: tuple[str, ...] = ()
    docs_url: str | None = DEFAULT_DOCS_URL
    project: str = "on"
    baseline: str | None = None
    unreported: tuple[str, ...] = ()
    cache: str = "on"

    def __post_init__(self) -> None:
        # a template the rule URLs cannot be made from fails here, not at the first finding
        if self.docs_url is not None:
            parse_docs_url(self.docs_url, "docs_url")

    @property
    def version_text(self) -> str:
        return "%d.%d" % self.target_version


def version_str(version: tuple[int, int]) -> str:
    return "%d.%d" % version


def _text(value: object) -> str:
    return str(value).strip()


def _label(option: str) -> str:
    """How an error names where a value came from: ``--xla-scope`` -> ``option --xla-scope``;
    anything else (``pyproject.toml: [tool.flake8-xla] xla-scope``) as given."""
    return f"option {option}" if option.startswith("--") else option


def _choice(value: object, option: str, choices: tuple[str, ...]) -> str:
    """``value`` (any case) if it is one of ``choices``; else :class:`SettingsError`, one line."""
    text = _text(value).lower()
    if text not in choices:
        raise SettingsError(f"{_label(option)}: invalid value {_text(value)!r} "
                            f"(choose from {', '.join(map(repr, choices))})")
    return text


def parse_scope(value: object, option: str = "--xla-scope") -> str:
    """Validate a scope value (any case: ``ALWAYS``); raise :class:`SettingsError` with one line otherwise."""
    return _choice(value, option, SCOPES)


def parse_project(value: object, option: str = "--xla-project") -> str:
    """Validate a project-mode value (``on``/``off``, any case); raise :class:`SettingsError` otherwise."""
    return _choice(value, option, PROJECT_MODES)


#: the newer-than-known releases already warned about in this process (each is said once)
_WARNED_NEWER: set[str] = set()


def parse_version(value: object, option: str = "--xla-version") -> tuple[int, int]:
    """Parse ``"X.Y"`` (also ``2.9.1``, ``v2.9``) into a known torch_xla release; raise
    :class:`SettingsError` otherwise. A TOML float is refused: ``2.10`` would read as 2.1.

    A release newer than the tables (``2.10`` on the day it ships) is not an error: one
    warning on stderr per value and process (``flake8-xla: warning: option --xla-version: torch_xla 2.10 is newer
    than the rules know (2.0 to 2.9); linting for 2.9``), and the newest known release is
    returned. One older than the oldest known stays an error."""
    if isinstance(value, float):
        raise SettingsError(f"{_label(option)}: invalid value {value!r} (write the release as a string, e.g. \"2.7\")")
    text = _text(value)
    match = re.fullmatch(r"v?(\d+)\.(\d+)(?:\.\d+)?", text)
    version = (int(match.group(1)), int(match.group(2))) if match else None
    if version is not None and version > NEWEST_VERSION:
        if text not in _WARNED_NEWER:
            _WARNED_NEWER.add(text)
            sys.stderr.write(f"flake8-xla: warning: {_label(option)}: torch_xla {text} is newer than the rules know "
                             f"({version_str(KNOWN_VERSIONS[0])} to {version_str(NEWEST_VERSION)}); "
                             f"linting for {version_str(NEWEST_VERSION)}\n")
        return NEWEST_VERSION
    if version not in KNOWN_VERSIONS:
        raise SettingsError(
            f"{_label(option)}: invalid value {text!r} (choose a torch_xla release, "
            f"{version_str(KNOWN_VERSIONS[0])} or newer, e.g. 2.7)"
        )
    return version


@dataclasses.dataclass(frozen=True)
class Option:
    """One option every host offers under the same name: ``--NAME`` for flake8 and the CLI,
    ``NAME`` in ``[flake8]``, ``[tool.flake8-xla]``, ``[tool.pylint.xla]`` and ``.pylintrc``.
    ``parse`` turns one raw value into the :class:`Settings` field ``field`` or raises
    :class:`SettingsError`; with ``multiple`` the raw value is a comma-separated list (or a
    TOML list) and ``parse`` gets the list of its items."""

    name: str
    field: str
    parse: Callable[[object, str], object]
    default: str
    metavar: str
    help: str
    multiple: bool = False


#: Every option, in the order hosts list them. flake8, pylint and the CLI register theirs from
#: this table and validate through :func:`from_options`, so the values accepted and the
#: error text are the same everywhere.
OPTIONS: tuple[Option, ...] = (
    Option("xla-scope", "scope", parse_scope, "auto", "{auto,always}",
           "auto (default): XLA-context rules only in modules that import torch_xla; "
           "always: treat every module as XLA code (porting a CUDA script)."),
    Option("xla-version", "target_version", parse_version, version_str(NEWEST_VERSION), "X.Y",
           f"torch_xla release to target, {version_str(KNOWN_VERSIONS[0])} or newer "
           f"(default {version_str(NEWEST_VERSION)}, the newest the rules know; a newer one warns and "
           f"means {version_str(NEWEST_VERSION)})."),
    Option("xla-reducing-calls", "reducing_calls", lambda items, option: parse_names(items, option), "", "NAMES",
           "in-house helpers that all-reduce gradients (mylib.dist.sync_grads, or a bare name): "
           "a call to one counts as gradient reduction (XLA201).", multiple=True),
    Option("xla-launchers", "launchers", lambda items, option: parse_names(items, option), "", "NAMES",
           "in-house launch wrappers whose first argument (or fn=) is the launched function, "
           "like torch_xla.launch.", multiple=True),
    Option("xla-docs-url", "docs_url", lambda value, option: parse_docs_url(value, option), "", "URL",
           "the rule pages' URL template, with {code} (XLA101) and/or {name}, where you host the docs "
           "(default: this release's pages, docs/rules/XLA101.md at the tag v" + __version__ + ")."),
    Option("xla-project", "project", parse_project, "on", "{on,off}",
           "on (default): read the source of the linted file's project modules (parse only, never "
           "import) to follow calls across them; off: lint each file alone."),
    Option("xla-cache", "cache", lambda value, option: _choice(value, option, CACHE_MODES), "on", "{on,off}",
           "on (default): keep project mode's module summaries between runs in the user cache folder "
           "($FLAKE8_XLA_CACHE_DIR to name another); off: compute them every run."),
    Option("xla-baseline", "baseline", lambda value, option: _parse_baseline(value, option), "", "FILE",
           "report only findings not in this baseline file (flake8-xla --write-baseline FILE writes one)."),
)


def _parse_baseline(value: object, option: str) -> str:
    from .baseline import parse_option

    return parse_option(value, option)


def parse_docs_url(value: object, option: str = "--xla-docs-url") -> str:
    """Validate a docs URL template: ``str.format`` syntax naming ``{code}`` and/or ``{name}`` and
    no other field, conversion (``!r``) or format spec (``:>9``); ``{{`` / ``}}`` are literal braces.
    Returns the template; raises :class:`SettingsError` (one line naming the bad field) otherwise."""
    text = str(value).strip()
    try:
        fields = [(name, conv, spec) for _, name, spec, conv in string.Formatter().parse(text) if name is not None]
    except ValueError as exc:  # a lone brace: "Single '{' encountered in format string"
        raise SettingsError(
            f"{_label(option)}: invalid value {text!r} ({exc}; write {{{{ or }}}} for a literal brace)") from None
    for name, conv, spec in fields:
        if name not in DOCS_URL_FIELDS or conv or spec:
            field = "{" + name + (f"!{conv}" if conv else "") + (f":{spec}" if spec else "") + "}"
            raise SettingsError(f"{_label(option)}: invalid value {text!r} ({field}: only {{code}} and {{name}} may be used)")
    if not fields:
        raise SettingsError(f"{_label(option)}: invalid value {text!r} (a URL template with {{code}} or {{name}})")
    return text


def fill_docs_url(template: str, code: str, name: str) -> str:
    """``template`` (accepted by :func:`parse_docs_url`) with ``{code}`` and ``{name}`` filled in."""
    return template.format(code=code, name=name)


def split_list(value: object) -> list[str]:
    """Items of a list option: a comma/whitespace-separated string or a list of strings."""
    if value is None:
        return []
    if isinstance(value, str):
        value = re.split(r"[,\s]+", value)
    elif not isinstance(value, (list, tuple)):
        value = [value]
    return [str(v).strip() for v in value if str(v).strip()]


def is_unset(value: object) -> bool:
    """``None`` or an empty string (``xla-scope =`` in a config file): the option's default."""
    return value is None or (isinstance(value, str) and not value.strip())


def from_options(values: Mapping[str, object], labels: Mapping[str, str] | None = None) -> Settings:
    """Validated :class:`Settings` from raw option values keyed by option name
    (``{"xla-scope": "ALWAYS", "xla-version": "2.9.1"}``; ``_`` for ``-`` is accepted).
    A missing, ``None`` or empty value means the default. ``labels`` says where a value came
    from, by option name (``{"xla-scope": "setup.cfg: [flake8] xla-scope"}``), for the error;
    the default is ``option --NAME``. Raises :class:`SettingsError` (one line) on a bad value."""
    norm = {str(k).replace("_", "-"): v for k, v in values.items()}
    labels = labels or {}
    fields = {}
    for opt in OPTIONS:
        raw = norm.get(opt.name)
        label = labels.get(opt.name, f"--{opt.name}")
        if opt.multiple:
            if raw is not None:
                fields[opt.field] = opt.parse(split_list(raw), label)
        elif not is_unset(raw):
            fields[opt.field] = opt.parse(raw, label)
    return Settings(**fields)


def build(scope: object = "auto", version: object = None) -> Settings:
    """Build validated :class:`Settings` from raw option values (``None`` = default)."""
    return from_options({"xla-scope": scope, "xla-version": version})


def parse_names(value: object, option: str) -> tuple[str, ...]:
    """A list of dotted names (``xla-reducing-calls``, ``xla-launchers``) from a
    comma/whitespace-separated string or a list; raise :class:`SettingsError` otherwise."""
    if value is None:
        return ()
    items = value.replace(",", " ").split() if isinstance(value, str) else [str(v).strip() for v in value]
    names = []
    for item in items:
        for name in item.replace(",", " ").split():
            if not re.fullmatch(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*", name):
                raise SettingsError(f"{_label(option)}: invalid value {name!r} (a dotted name such as mylib.dist.sync_grads)")
            if name not in names:
                names.append(name)
    return tuple(names)
