"""Settings shared by every adapter (flake8, pylint, CLI).

Each adapter builds one :class:`Settings` from its host's options and hands it to
:func:`flake8_xla.engine.run`. Values are validated here, once, so every host reports a
bad value with the same one-line message.
"""

from __future__ import annotations

import dataclasses
import re

#: torch_xla releases the rules know, oldest first. The last one is the default target.
KNOWN_VERSIONS: tuple[tuple[int, int], ...] = tuple((2, minor) for minor in range(10))
NEWEST_VERSION = KNOWN_VERSIONS[-1]
SCOPES = ("auto", "always")
#: where this repository is hosted (one place: the docs URL, and the docs, follow it)
PROJECT_URL = "https://github.com/OWNER/flake8-xla"
#: the rule pages' URL template: ``{code}`` is ``XLA101``, ``{name}`` the rule's name
DEFAULT_DOCS_URL = PROJECT_URL + "/blob/main/docs/rules/{code}.md"


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
            :func:`flake8_xla.registry.doc_url`.

    ``reducing_calls`` and ``launchers`` hold dotted names: ``mylib.dist.sync_grads``
    matches a call whose name resolves (through imports) to it; a name without a dot,
    ``sync_grads``, matches any call of that name (a module function, an imported one, a
    method).
    """

    scope: str = "auto"
    target_version: tuple[int, int] = NEWEST_VERSION
    reducing_calls: tuple[str, ...] = ()
    launchers: tuple[str, ...] = ()
    docs_url: str = DEFAULT_DOCS_URL

    @property
    def version_text(self) -> str:
        return "%d.%d" % self.target_version


def version_str(version: tuple[int, int]) -> str:
    return "%d.%d" % version


def parse_scope(value: object, option: str = "--xla-scope") -> str:
    """Validate a scope value; raise :class:`SettingsError` with one line otherwise."""
    text = str(value).strip().lower()
    if text not in SCOPES:
        raise SettingsError(
            f"option {option}: invalid value {str(value)!r} (choose from 'auto', 'always')"
        )
    return text


def parse_version(value: object, option: str = "--xla-version") -> tuple[int, int]:
    """Parse ``"X.Y"`` into a known torch_xla release; raise :class:`SettingsError` otherwise."""
    text = str(value).strip()
    match = re.fullmatch(r"v?(\d+)\.(\d+)(?:\.\d+)?", text)
    version = (int(match.group(1)), int(match.group(2))) if match else None
    if version not in KNOWN_VERSIONS:
        raise SettingsError(
            f"option {option}: invalid value {text!r} (choose a torch_xla release from "
            f"{version_str(KNOWN_VERSIONS[0])} to {version_str(NEWEST_VERSION)}, e.g. 2.7)"
        )
    return version


def build(scope: object = "auto", version: object = None) -> Settings:
    """Build validated :class:`Settings` from raw option values (``None`` = default)."""
    return Settings(
        scope=parse_scope(scope if scope is not None else "auto"),
        target_version=parse_version(version) if version is not None else NEWEST_VERSION,
    )


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
                raise SettingsError(f"option {option}: invalid value {name!r} (a dotted name such as mylib.dist.sync_grads)")
            if name not in names:
                names.append(name)
    return tuple(names)
