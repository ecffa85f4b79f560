"""torch_xla API facts across releases: the data lives in ``flake8_xla/data/*.json``.

- ``api_changes.json`` (curated): every renamed, deprecated or removed name or module,
  with the release that deprecated and removed it, its replacement and the release that
  introduced the replacement, and a reference; signature overrides; call suggestions;
  hints for names that no release defines.
- ``torch_xla_names.json`` (generated from the release tags): the names bound at module
  level in ``torch_xla``, ``xm``, ``xr``, ``xmp``, ``pl``, ``xs`` and ``torch_xla.amp``,
  per release.
- ``torch_xla_signatures.json`` (generated from the release tags): parameter lists of
  the public functions of those modules, per release range.
- ``behaviour_changes.json`` (curated): behaviour that changed between releases without a
  rename (``xm.save`` lost its rendezvous in 2.1), with the release and a reference.
- ``torch_xla_env_vars.json`` (generated from the release tags by
  ``scripts/gen_env_table.py``): every environment variable each release reads, through
  the C++ runtime's ``GetEnv*`` helpers and ``env_vars.cc`` constants or torch_xla's
  Python (``os.environ``, ``xu.getenv_as``, ``xla_env_vars.py``).

Every boundary was checked on the pytorch/xla release tags (``git show vX.Y.0:...``; 2.1
from ``v2.1.1``, since the ``v2.1.0`` tag points at a pre-release master commit).
Versions are ``"X.Y"`` strings; ``None`` means never within the releases the rules know.
"""

from __future__ import annotations

import builtins
import functools
import json
import os
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"
VERSIONS = tuple(f"2.{m}" for m in range(10))


def vtuple(text: str | None) -> tuple[int, int] | None:
    return None if text is None else tuple(int(p) for p in text.split("."))  # type: ignore[return-value]


@functools.lru_cache(maxsize=None)
def _load(name: str) -> dict:
    with open(DATA / name, encoding="utf-8") as fh:
        return json.load(fh)


def changes() -> list[dict]:
    """The curated change records (``code``, ``kind``, ``name``, ``deprecated``, ``removed``, ...)."""
    return _load("api_changes.json")["changes"]


def hints() -> dict[str, str]:
    return _load("api_changes.json")["hints"]


def suggestion(qualname: str) -> str | None:
    return _load("api_changes.json")["suggestions"].get(qualname)


@functools.lru_cache(maxsize=None)
def signatures() -> dict[str, list[list]]:
    """qualname -> [[first, last or None, params text], ...] (overrides win)."""
    table = dict(_load("torch_xla_signatures.json")["signatures"])
    table.update(_load("api_changes.json")["signature_overrides"])
    return table


def signature(qualname: str, version: tuple[int, int]) -> str | None:
    """The parameter list of ``qualname`` in ``version``, or None when it has none there."""
    for first, last, params in signatures().get(qualname, ()):
        if vtuple(first) <= version and (last is None or version <= vtuple(last)):
            return params
    return None


def _expand(ranges: str) -> frozenset[str]:
    out = set()
    for part in ranges.split(","):
        first, _, last = part.partition("-")
        last = last or first
        out.update(v for v in VERSIONS if vtuple(first) <= vtuple(v) <= vtuple(last))
    return frozenset(out)


@functools.lru_cache(maxsize=None)
def tracked_modules() -> dict[str, dict]:
    """module -> {"present": frozenset of versions, "names": {name: frozenset of versions}}."""
    out = {}
    for module, data in _load("torch_xla_names.json")["modules"].items():
        out[module] = {
            "present": _expand(data["present"]),
            "names": {name: _expand(r) for name, r in data["names"].items()},
        }
    return out


def name_versions(module: str, name: str) -> frozenset[str] | None:
    """Releases whose ``module`` binds ``name`` (a submodule counts); None when the module
    is not tracked."""
    data = tracked_modules().get(module)
    if data is None:
        return None
    return data["names"].get(name, frozenset()) | module_presence().get(f"{module}.{name}", frozenset())


def names_in(module: str, version: str) -> list[str]:
    data = tracked_modules().get(module, {"names": {}})
    return sorted(n for n, vs in data["names"].items() if version in vs)


def env_vars() -> dict[str, dict]:
    """Environment variables torch_xla deprecated or stopped reading (``XRT_*`` is a prefix)."""
    return _load("api_changes.json")["env_vars"]


def env_var(key: str) -> tuple[str, dict] | None:
    table = env_vars()
    if key in table:
        return key, table[key]
    for pattern, entry in table.items():
        if pattern.endswith("*") and key.startswith(pattern[:-1]):
            return pattern, entry
    return None


@functools.lru_cache(maxsize=None)
def read_env_vars() -> dict[str, frozenset[str]]:
    """Every environment variable some torch_xla release reads -> the releases that read it."""
    return {name: _expand(r) for name, r in _load("torch_xla_env_vars.json")["names"].items()}


def edit_distance(a: str, b: str, limit: int) -> int:
    """Edit distance of ``a`` and ``b`` counting a swap of two neighbours as one edit
    (optimal string alignment), or ``limit + 1`` once it exceeds ``limit``."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            d = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                d = min(d, prev2[j - 2] + 1)  # XLA_USE_BF61 -> XLA_USE_BF16
            cur.append(d)
        if min(cur) > limit:
            return limit + 1
        prev2, prev = prev, cur
    return min(prev[-1], limit + 1)


#: two edits count as a typo only when the names differ in a tail at least this long:
#: XLA_USE_PJRT is not a typo of XLA_USE_IFRT, nor XLA_LOGS of XLA_FLAGS
TWO_EDIT_TAIL = 6


def nearest_env_var(name: str, limit: int = 2) -> str | None:
    """The variable some torch_xla release reads that is nearest to ``name`` (one edit, a
    swap of neighbours included; two edits when the names differ in a tail of at least
    ``TWO_EDIT_TAIL`` characters), or None. Ties go to the same prefix, then to the longer
    common beginning (``XLA_USE_F16`` -> ``XLA_USE_FP16``, not ``XLA_USE_BF16``), then the
    name."""
    prefix = name.split("_", 1)[0]
    best = None
    for known in read_env_vars():
        d = edit_distance(name, known, limit)
        if d > limit:
            continue
        common = len(os.path.commonprefix([name, known]))
        if d >= 2 and max(len(name), len(known)) - common < TWO_EDIT_TAIL:
            continue
        key = (d, known.split("_", 1)[0] != prefix, -common, known)
        if best is None or key < best:
            best = key
    return None if best is None else best[-1]


def older_equivalent(qualname: str) -> str | None:
    return _load("api_changes.json")["older_equivalents"].get(qualname)


def removed_hint(qualname: str) -> str | None:
    return _load("api_changes.json").get("removed_hints", {}).get(qualname)


@functools.lru_cache(maxsize=None)
def module_presence() -> dict[str, frozenset[str]]:
    """Every torch_xla module (dotted) -> the releases that ship it."""
    return {m: _expand(r) for m, r in _load("torch_xla_names.json")["module_presence"].items()}


def pick(value, version: tuple[int, int]) -> str:
    """A replacement text, or the last of ``[[since, text], ...]`` whose ``since`` <= version."""
    if isinstance(value, str):
        return value
    chosen = value[0][1]
    for since, text in value:
        if vtuple(since) <= version:
            chosen = text
    return chosen


@functools.lru_cache(maxsize=None)
def star_names(module: str, version: str | None = None) -> frozenset[str]:
    """The names ``from module import *`` binds: the module's ``__all__`` where it has one,
    else the public names it (and the modules it star-imports) defines, in any release, so
    a name the target release removed is still recognised and reported as removed. A name
    that is also a Python builtin (``compile``) is left out where ``version`` does not
    export it: there the builtin is meant. Empty for a module the table does not track
    (``torch_xla_star_exports.json``, generated from the release tags by
    ``scripts/gen_star_exports.py``)."""
    data = _load("torch_xla_star_exports.json")["modules"].get(module)
    if data is None:
        return frozenset()
    out = set()
    for table in (data["all"], data["defined"]):
        for name, ranges in table.items():
            if version is not None and name in _BUILTINS and version not in _expand(ranges):
                continue
            out.add(name)
    return frozenset(out)


_BUILTINS = frozenset(dir(builtins))


def behaviour_changes() -> list[dict]:
    """Behaviour that changed between releases without a rename (``behaviour_changes.json``):
    ``code``, ``name``, ``since`` (the first release that behaves the new way), ``before``,
    ``after``, ``reference``."""
    return _load("behaviour_changes.json")["changes"]


def behaviour_since(qualname: str, code: str) -> str:
    """The first release in which ``qualname`` behaves the new way, for rule ``code``."""
    for entry in behaviour_changes():
        if entry["name"] == qualname and entry["code"] == code:
            return entry["since"]
    raise KeyError(f"no behaviour change of {qualname} for {code}")


def introduced(qualname: str) -> dict | None:
    """A suggested API that first appears after 2.0: ``since`` (the first release that has
    it), ``before`` (what to suggest on older releases) and its reference; None if untracked."""
    return _load("api_changes.json")["introduced"].get(qualname)


def suggest(qualname: str, version: tuple[int, int], text: str) -> str:
    """``text`` (a call of ``qualname``) when ``version`` has ``qualname``, else the
    ``before`` form the version table records for older releases."""
    entry = introduced(qualname)
    if entry is None or version >= vtuple(entry["since"]):
        return text
    return entry["before"]
