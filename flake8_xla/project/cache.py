"""The on-disk cache of module summaries (project mode), as Ruff and mypy keep theirs.

A summary (:class:`~.summary.ModuleSummary`) is plain data computed from the module's text,
the run's settings and the project's other modules (the light index of their classes and
functions). The cache keeps it between runs, in the user's cache folder, keyed by:

- the linter's version and a digest of the settings a summary depends on;
- the module's resolved path and the digest of its bytes;
- the digest of the project's Python files (path and bytes, once per root and process):
  a summary may read any of them, so an edit anywhere in the project makes every entry
  of that project cold (sound, and simple; the language server keeps the analysis in
  memory between edits anyway).

Beside the summaries, the subfolder ``answers`` keeps each linted module's answers to the
project questions its rules ask most (:mod:`.answers`), keyed the same way with the module's
text and the rules that ran; the subfolder ``findings`` each linted module's final findings
(:mod:`.findings`: the same plus every setting and the Python version); the subfolder
``reach`` each project's reach verdict (:func:`flake8_xla.project.reach_verdict`).

Where: ``$FLAKE8_XLA_CACHE_DIR`` when set (the user names it: it may be anywhere), else
the platform's user cache folder (``platformdirs`` when installed; ``$XDG_CACHE_HOME`` or
``~/.cache`` on Linux, ``~/Library/Caches`` on macOS, ``%LOCALAPPDATA%`` on Windows),
subfolder ``flake8-xla``. A folder the user did not name is never used when it lies inside
the linted project's tree. Off with ``xla-cache = off`` (flake8/pylint option,
``--xla-cache=off``) or the CLI's ``--no-cache``.

Entries are JSON (never pickle: loading one runs no code) of a whitelist of the summary's
dataclasses (each an object of its class name and its fields away from their default,
a tuple an array); an entry that cannot be read, is not JSON, names another key or a class
off the whitelist is ignored and rewritten. Writes go through a temporary file of the
writing process and ``os.replace`` (a reader sees the old entry or the new one, never half
of one). Any error
of the cache (a read-only or full disk, a folder that cannot be made) turns it off for
the run; it never raises.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import sys
from pathlib import Path

from ..settings import Settings

#: bump when the summary's format changes (with the package version, part of every key)
FORMAT = 52  # 52: merged with cost33 (findings/ and reach/ subfolders: each linted module's final findings (findings/ subfolder, .findings) and each project's reach verdict (reach/; cost33)); 51: FunctionFacts.unsynced_params (XLA301 across modules), ArgFacts xla_device; 50: returns_device skips XLA-off returns, moved_in_place; calls on the variable of a loop over instances of project classes (one CallFacts a class); a launch wrapper single-process by its literals launches no replicas; 49 (session 17): FunctionFacts.named_only (callees only named, not called: HelperFacts.runs), ArgFacts result (what a project function returns); 48: the linted modules' answers (answers/ subfolder, .answers; cost32, merged); 47: FunctionFacts.returns_items, ArgFacts recv_batch, receivers of parameters and tuple items, inherited self calls; 46: ModuleSummary.registries / registrars / decorated, registry lookups as values ("reg"); 45: ClassFacts.attr_values, receiver-chain edges (recv:), splats in passes, a dataset calling a rank helper shards itself; 44: a dataclass is one object with its fields away from their default ({"d": name, ...}), a tuple an array; 43: a torch_xla script keeps its module level as one function (entry) for its calls' contexts; 42: the XLA-off guard is its own chain (@off); 41: moved_after skips an optimizer replaced unused after the move; 40: ClassFacts.bases_order (a mixin listed first); 39: a wrapper name on a factory-built object of another class launches nothing; 38: launched_out carries the launch's literal args; 37: a call in an XLA-off branch needs XLA off (edges); 36: calls of a parameter holding a function (edges "param:name"); 35: tensors computed from a parameter (PARAM_TENSOR); 34: guards on run probes (torch.cuda.is_available(), is_xla_available()); 33: dropout defaults only where the module builds the class; 32: CallFacts.moved_after; 31: merged with the lazy edge sites; 30: dropout rates through parameters; 29: DispatchFacts.loops; 28: object values, launches in functions, entry roots (session 13); 17-27: (25: a call of a call is described, f()(x)); self-call sites say which loop iterates them, calls which call receives their value (session 12); 12: values through dispatch and parameters (session 11); relative imports inside
           # torch/ and torch_xla/ are the library
_DISABLED: set[str] = set()  # cache folders an error turned off for this process
_DIGESTS: dict[Path, str] = {}  # project root -> digest of its files, once per process
_FILE_DIGESTS: dict[str, bytes] = {}  # str path -> SHA-256 of its bytes, as the project digest read them
_STATS = {"hits": 0, "misses": 0, "writes": 0}
_ANSWER_STATS = {"hits": 0, "misses": 0, "writes": 0}  # the linted modules' answers (:mod:`.answers`)
_FINDING_STATS = {"hits": 0, "misses": 0, "writes": 0}  # the linted modules' findings (:mod:`.findings`)


def clear() -> None:
    """Forget the per-process state (project digests, disabled folders, counters)."""
    _DIGESTS.clear()
    _FILE_DIGESTS.clear()
    _DISABLED.clear()
    _MADE.clear()
    for k in _STATS:
        _STATS[k] = 0
        _ANSWER_STATS[k] = 0
        _FINDING_STATS[k] = 0


def stats() -> dict[str, int]:
    """``{"hits", "misses", "writes"}`` of this process (for tests and the benchmark)."""
    return dict(_STATS)


def answer_stats() -> dict[str, int]:
    """:func:`stats` of the linted modules' answers (:mod:`.answers`)."""
    return dict(_ANSWER_STATS)


def finding_stats() -> dict[str, int]:
    """:func:`stats` of the linted modules' findings (:mod:`.findings`)."""
    return dict(_FINDING_STATS)


_VERSION: list[str] = []


def _version() -> str:
    """The installed package's version (asked once per process)."""
    if not _VERSION:
        _VERSION.append(_read_version())
    return _VERSION[0]


def _read_version() -> str:
    # the package's own version string (setup.cfg's version is this attribute): asking
    # importlib.metadata instead scans every distribution on the path (about 20 ms a process)
    from .. import __version__

    return __version__


def folder(root: Path | None = None) -> Path | None:
    """The cache folder, or ``None`` when there is none to use (a folder the user did not
    name that lies inside the project ``root``)."""
    named = os.environ.get("FLAKE8_XLA_CACHE_DIR")
    if named:
        return Path(named).expanduser()
    base = _platform_folder()
    if root is not None:
        try:
            base.resolve().relative_to(root.resolve())
            return None  # inside the linted tree, and nobody named it there
        except (ValueError, OSError):
            pass
    return base


def _platform_folder() -> Path:
    """The platform's user cache folder for flake8-xla."""
    try:
        import platformdirs  # a well-kept library when it is there (pylint depends on it)

        return Path(platformdirs.user_cache_dir("flake8-xla", appauthor=False))
    except Exception:
        if sys.platform == "win32":
            return Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local") / "flake8-xla" / "Cache"
        if sys.platform == "darwin":
            return Path.home() / "Library" / "Caches" / "flake8-xla"
        return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "flake8-xla"


def project_digest(root: Path, paths, read=None) -> str:
    """The digest of the project's Python files (relative path and bytes), once per root;
    ``read``: ``path -> bytes | None`` (default :func:`.files.read_bytes`)."""
    found = _DIGESTS.get(root)
    if found is None:
        from .files import read_bytes

        read_bytes = read or read_bytes
        h = hashlib.sha256()
        for p in sorted(paths, key=str):
            data = read_bytes(p)
            name = str(p)
            h.update(name.encode("utf-8", "surrogatepass"))
            own = hashlib.sha256(data).digest() if data is not None else None
            if own is not None:
                _FILE_DIGESTS[name] = own
            h.update(b"\0" + (own if own is not None else b"-"))
        found = _DIGESTS[root] = h.hexdigest()
    return found


def file_digest(path: Path) -> bytes | None:
    """The SHA-256 of the bytes of project file ``path`` as :func:`project_digest` read them
    (``None`` when it did not read that file)."""
    return _FILE_DIGESTS.get(str(path))


def key(path: Path, data: bytes, settings: Settings, project: str, extra: object, digest: bytes | None = None) -> str:
    """The entry's key (hex digest) for the module at ``path`` whose bytes are ``data``
    (``digest``: their SHA-256, when the caller has it)."""
    relevant = (settings.scope, settings.target_version, settings.reducing_calls, settings.launchers,
                settings.project)
    h = hashlib.sha256()
    for part in (f"flake8-xla {_version()} format {FORMAT}", repr(relevant), project, str(path), repr(extra)):
        h.update(part.encode("utf-8", "surrogatepass") + b"\0")
    h.update(digest if digest is not None else hashlib.sha256(data).digest())
    return h.hexdigest()


def load(where: Path, entry: str):
    """The summary stored under ``entry`` in ``where`` (``None``: the stored verdict that the
    module does not parse), or :data:`MISSING` (no entry, or one unreadable or foreign:
    ignored)."""
    if str(where) in _DISABLED:
        return _MISSING
    try:
        found = _read(where, entry, _decoded)["summary"]
        from .summary import ModuleSummary

        if found is not None and type(found) is not ModuleSummary:
            raise ValueError("not a summary")
    except FileNotFoundError:
        _STATS["misses"] += 1
        return _MISSING
    except (Exception, RecursionError):  # corrupt or foreign: ignored, rewritten by the caller
        _STATS["misses"] += 1
        return _MISSING
    _STATS["hits"] += 1
    return found


def store(where: Path, entry: str, summary) -> None:
    """Write ``summary`` (or ``None``: the module does not parse) under ``entry``,
    atomically; any error turns the cache off for this folder and run."""
    if str(where) in _DISABLED:
        return
    try:
        encoded = _encode(summary)
    except (Exception, RecursionError):  # (as a failed write: no cache this run)
        _DISABLED.add(str(where))
        return
    _store(where, where, entry, {"summary": encoded}, _STATS)


#: the subfolder of the cache folder that holds the linted modules' answers (:mod:`.answers`)
ANSWERS = "answers"


def load_answers(where: Path, entry: str):
    """The answers stored under ``entry`` (:mod:`.answers`, in the :data:`ANSWERS` subfolder)
    as ``{name: value}``, or :data:`MISSING` (no entry, or one unreadable or foreign: ignored)."""
    if str(where) in _DISABLED:
        return _MISSING
    try:
        doc = _read(where / ANSWERS, entry, _decoded)
        if type(doc.get("answers")) is not list:
            raise ValueError("foreign entry")
        found = {name: value for name, value in doc["answers"]}
        if not all(type(name) is str for name in found):
            raise ValueError("foreign entry")
    except (Exception, RecursionError):  # none, corrupt or foreign: asked again, rewritten
        _ANSWER_STATS["misses"] += 1
        return _MISSING
    _ANSWER_STATS["hits"] += 1
    return found


def store_answers(where: Path, entry: str, answers: dict) -> None:
    """Write ``answers`` (``{name: value}``, values of :func:`_encode`'s kinds) under
    ``entry``, atomically; any error turns the cache off for this folder and run."""
    if str(where) in _DISABLED:
        return
    try:
        encoded = [[k, _encode(v)] for k, v in sorted(answers.items())]
    except (Exception, RecursionError):  # a value the entry cannot hold: not kept (computed again)
        return
    _store(where, where / ANSWERS, entry, {"answers": encoded}, _ANSWER_STATS)


#: the subfolder of the cache folder that holds the linted modules' findings (:mod:`.findings`)
FINDINGS = "findings"


def load_findings(where: Path, entry: str):
    """The findings stored under ``entry`` (:mod:`.findings`, in the :data:`FINDINGS` subfolder)
    as a tuple of ``(line, col, code, message, end, covers)`` (``end`` a ``(line, col)`` pair or
    ``None``), or :data:`MISSING` (no entry, or one unreadable or foreign: ignored)."""
    if str(where) in _DISABLED:
        return _MISSING
    try:
        doc = _read(where / FINDINGS, entry)
        if type(doc.get("findings")) is not list:
            raise ValueError("foreign entry")
        found = tuple(_finding(item) for item in doc["findings"])
    except (Exception, RecursionError):  # none, corrupt or foreign: linted again, rewritten
        _FINDING_STATS["misses"] += 1
        return _MISSING
    _FINDING_STATS["hits"] += 1
    return found


def _finding(item) -> tuple:
    """One stored finding, checked field by field (``ValueError`` when it is not one)."""
    if type(item) is not list or len(item) != 6:
        raise ValueError("not a finding")
    line, col, code, message, end, covers = item
    if type(line) is not int or type(col) is not int or type(code) is not str or type(message) is not str \
            or type(covers) is not bool:
        raise ValueError("not a finding")
    if end is not None:
        if type(end) is not list or len(end) != 2 or type(end[0]) is not int or type(end[1]) is not int:
            raise ValueError("not a finding")
        end = (end[0], end[1])
    return line, col, code, message, end, covers


def store_findings(where: Path, entry: str, findings) -> None:
    """Write ``findings`` (``(line, col, code, message, end, covers)`` each) under ``entry``,
    atomically; any error turns the cache off for this folder and run."""
    _store(where, where / FINDINGS, entry, {"findings": [list(f) for f in findings]}, _FINDING_STATS)


#: the subfolder of the cache folder that holds each project's reach verdict (:mod:`.findings`)
REACH = "reach"


def load_reached(where: Path, entry: str):
    """The reach verdict stored under ``entry`` (:func:`flake8_xla.project.reach_verdict`) as
    ``(frozenset of the files whose project facts may be any, whether the project has launch
    wrappers, whether every module's facts are empty)``, or :data:`MISSING`."""
    if str(where) in _DISABLED:
        return _MISSING
    try:
        doc = _read(where / REACH, entry)
        if type(doc.get("files")) is not list or not all(type(f) is str for f in doc["files"]) \
                or type(doc.get("wrappers")) is not bool or type(doc.get("nothing")) is not bool:
            raise ValueError("foreign entry")
    except (Exception, RecursionError):  # none, corrupt or foreign: the reach is built, rewritten
        return _MISSING
    return frozenset(doc["files"]), doc["wrappers"], doc["nothing"]


def store_reached(where: Path, entry: str, paths, wrappers: bool, nothing: bool) -> None:
    """Write the reach verdict (``paths``, ``wrappers``, ``nothing``) under ``entry``; any error
    turns the cache off."""
    _store(where, where / REACH, entry, {"files": sorted(paths), "wrappers": wrappers, "nothing": nothing})


def _read(folder: Path, entry: str, hook=None) -> dict:
    """The document of entry ``entry`` of ``folder`` (its two-letter subfolder), decoded
    with ``hook``; raises when there is none, it does not parse, or its key or format is not
    this entry's (``ValueError("foreign entry")``): the callers count a miss and go on."""
    with open(folder / entry[:2] / f"{entry}.json", encoding="utf-8") as fh:
        doc = json.load(fh, object_hook=hook) if hook is not None else json.load(fh)
    if type(doc) is not dict or doc.get("key") != entry or doc.get("format") != FORMAT:
        raise ValueError("foreign entry")
    return doc


def _store(where: Path, folder: Path, entry: str, fields: dict, stats: dict | None = None) -> None:
    """Write ``fields`` (JSON-ready) with this entry's key and format as entry ``entry`` of
    ``folder`` (a subfolder of the cache folder ``where``, or ``where`` itself), atomically
    (:func:`_write`), counting the write in ``stats``; any error turns the cache off for
    ``where`` for this run (a read-only or full disk)."""
    if str(where) in _DISABLED:
        return
    try:
        _write(folder, entry, json.dumps({"format": FORMAT, "key": entry, **fields}, separators=(",", ":")))
        if stats is not None:
            stats["writes"] += 1
    except (Exception, RecursionError):
        _DISABLED.add(str(where))


def _write(where: Path, entry: str, text: str) -> None:
    """Write ``text`` as entry ``entry`` of folder ``where`` (its two-letter subfolder), atomically:
    a temporary file of this process (created exclusively, a name no other process uses)
    replaced into place, removed on any error (which is raised). Each subfolder is made once
    per process; the file is written with ``os`` calls (a cold run writes several hundred
    entries: ``tempfile.mkstemp`` and a text-mode file object cost about twice as much)."""
    sub = os.path.join(where, entry[:2])
    if sub not in _MADE:
        os.makedirs(sub, exist_ok=True)
        _MADE.add(sub)
    _COUNT[0] += 1
    tmp = os.path.join(sub, f".tmp-{os.getpid()}-{_COUNT[0]}-{os.urandom(4).hex()}.json")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o644)
        try:
            data = text.encode("utf-8")
            while data:
                data = data[os.write(fd, data):]
        finally:
            os.close(fd)
        os.replace(tmp, os.path.join(sub, f"{entry}.json"))
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if not os.path.isdir(sub):
            _MADE.discard(sub)  # (removed meanwhile: made again next time)
        raise


_MADE: set[str] = set()  # the entry subfolders this process made or found
_COUNT = [0]  # this process's temporary files so far (their names)


#: what :func:`load` returns for an entry it does not have (``None`` is a stored verdict)
_MISSING = object()
MISSING = _MISSING


_WHITELIST: dict[str, type] = {}


def _classes() -> dict[str, type]:
    """The dataclasses an entry may hold, by name (built once)."""
    if not _WHITELIST:
        from .callers import ArgFacts, CallFacts, DispatchFacts, SelfSite
        from .summary import ClassFacts, FunctionFacts, LaunchSetup, ModuleSummary

        kinds = (ArgFacts, CallFacts, DispatchFacts, SelfSite, ClassFacts, FunctionFacts, LaunchSetup, ModuleSummary)
        _WHITELIST.update((c.__name__, c) for c in kinds)
    return _WHITELIST


def encodable(value) -> bool:
    """An entry can hold ``value`` (:func:`_encode` takes it)."""
    try:
        _encode(value)
    except (Exception, RecursionError):
        return False
    return True


def _encode(value):
    t = type(value)
    if value is None or t in (str, int, float, bool):
        return value
    if t is tuple:
        return [_encode(v) for v in value]
    if t is frozenset:
        return {"s": sorted((_encode(v) for v in value), key=repr)}
    fields = _ENCODED_FIELDS.get(t)
    if fields is None:
        if not (dataclasses.is_dataclass(value) and t.__name__ in _classes()):
            raise TypeError(f"not cacheable: {t.__name__}")
        fields = _ENCODED_FIELDS[t] = tuple((f.name, f.default) for f in dataclasses.fields(value))
    out = {"d": t.__name__}
    for name, default in fields:
        v = getattr(value, name)
        if type(v) is not type(default) or v != default:  # (a field at its default is left out)
            out[name] = _encode(v)
    return out


#: a class of the whitelist -> ``(name, default)`` of its fields, in order (``MISSING`` for a
#: field without a default); :func:`_encode` writes only the fields away from their default
#: (a summary's functions hold mostly empty facts: a third of the text, and of its decoding)
_ENCODED_FIELDS: dict[type, tuple[tuple[str, object], ...]] = {}


def _decoded(obj: dict):
    """``json.load``'s object hook: each JSON object of an entry as it is read, innermost
    first (one pass in the parser, about half the time of a second walk over the loaded
    document, :func:`_decode`): a dataclass of the whitelist (``{"d": name, field: value,
    ...}``, the fields away from their default, already decoded; a JSON array among them is
    a tuple), a frozenset (``{"s": [...]}``); any other object (the entry itself: never one
    key, never a ``"d"``) is left a dict. A class off the whitelist or fields of another
    version raise ``ValueError``, as :func:`_decode` does."""
    if "d" in obj:
        return _dataclass(obj)
    if len(obj) == 1:
        items = obj.get("s")
        if type(items) is list:
            return frozenset(_tuple(items) if list in map(type, items) else items)  # (a dict: TypeError)
        raise ValueError("not a cached value")
    return obj


def _tuple(items: list) -> tuple:
    """A JSON array of an entry as the tuple it encodes (its arrays too)."""
    if list in map(type, items):
        return tuple([_tuple(v) if type(v) is list else v for v in items])
    return tuple(items)


def _dataclass(obj: dict):
    """The instance of the whitelisted class ``obj["d"]`` with the fields of ``obj`` (the others
    at their defaults), made without the class's ``__init__`` (a frozen class sets each field
    with ``object.__setattr__``: half the decoding's time): the same object."""
    name = obj.pop("d")
    shape = _shapes().get(name) if type(name) is str else None
    if shape is None:
        raise ValueError("a class off the whitelist")
    required, defaults = shape
    if not obj.keys() <= defaults.keys() | required or not required <= obj.keys():
        raise ValueError("fields of another version")
    made = _new(_WHITELIST[name])
    attrs = made.__dict__
    attrs.update(defaults)
    attrs.update(obj)
    for k, v in obj.items():
        if type(v) is list:
            attrs[k] = _tuple(v)
    return made


_SHAPES: dict[str, tuple[frozenset[str], dict[str, object]]] = {}
_new = object.__new__


def _shapes() -> dict[str, tuple[frozenset[str], dict[str, object]]]:
    """Per class name of the whitelist: ``(the fields without a default, {field: default})``
    (built once)."""
    if not _SHAPES:
        for name, c in _classes().items():
            fields = dataclasses.fields(c)
            _SHAPES[name] = (frozenset(f.name for f in fields if f.default is dataclasses.MISSING),
                             {f.name: f.default for f in fields if f.default is not dataclasses.MISSING})
    return _SHAPES


def _decode(value):
    t = type(value)
    if value is None or t in (str, int, float, bool):
        return value
    if t is list:
        return tuple(_decode(v) for v in value)
    if t is dict:
        if "d" in value:
            return _dataclass({k: (v if k == "d" else _decode(v)) for k, v in value.items()})
        if "s" in value:
            return frozenset(_decode(v) for v in value["s"])
        raise ValueError("not a cached value")
    raise ValueError(f"not a cached value: {t.__name__}")
