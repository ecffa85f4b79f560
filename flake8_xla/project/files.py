"""The files of a project: its root, its modules, imports resolved to files, a reverse-import index.

Nothing here parses Python: imports are resolved the way Python's import system would find
them on the paths a project's scripts run with (the script's own folder, the root, ``src/``),
and the reverse index reads import statements with a regular expression, a cheap pre-filter
whose candidates :mod:`.summary` confirms on the parsed module.
"""

from __future__ import annotations

import os
import stat
import re
from pathlib import Path

#: files that mark a project's root (the nearest folder up from the linted file holding one)
ROOT_MARKERS = ("pyproject.toml", "setup.cfg", "setup.py", ".git")
#: folders never scanned: environments, build output, caches (and every hidden folder)
SKIP_DIRS = frozenset({".venv", "venv", "build", "dist", "site-packages", "__pycache__", "node_modules"})
#: top-level packages whose API the rules know by name: an absolute import of one is that
#: library, never a project module (also when the project is the library's own source tree)
KNOWN_LIBRARIES = frozenset({"torch", "torch_xla"})
#: a project with more Python files than this is not scanned for importers (project mode
#: then knows only what the linted file imports)
MAX_FILES = 20000

#: a call of a name: ``name(`` / ``.name(`` (``\b``: no match is tried inside a word)
_CALLED = re.compile(r"\b(\w+)\s*\(|[\"'](\w+)[\"']")  # name( / .name(, and "name" (fire("on_step_end", ...))
#: how many names :meth:`ProjectFiles.calling` answers by a scan of their own before it builds the index
CALL_SCANS = 16
_NO_FILES: set[str] = set()  # (never modified: the answer for a name no file calls)

_IMPORT_RE = re.compile(
    r"^[ \t]*(?:from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#;]*)|import[ \t]+([^\n#;]+))",
    re.MULTILINE,
)


def find_root(path: Path) -> Path:
    """The nearest folder up from ``path`` (a file) holding a root marker, else the file's folder."""
    return root_from(path.parent)


def root_from(start: Path) -> Path:
    """The nearest folder from the folder ``start`` up holding a root marker, else ``start``."""
    for folder in (start, *start.parents):
        for marker in ROOT_MARKERS:
            if (folder / marker).exists():
                return folder
    return start


class ProjectFiles:
    """The Python files under one root, and imports resolved to them.

    Args:
        root: the project root (absolute, resolved).
    """

    def __init__(self, root: Path):
        self.root = root
        self._real_root = Path(os.path.realpath(root))
        self._files: list[Path] | None = None
        self._reverse: dict[Path, set[Path]] | None = None
        self._resolved: dict[tuple, Path | None] = {}
        self._forward: dict[Path, set[Path]] = {}
        self._called: dict[str, set[str]] | None = None  # name -> files calling it (all names)
        self._scanned: dict[str, set[str]] = {}  # the same, name by name, before the index
        self._texts: list[tuple[str, str]] | None = None  # the files' texts while names are scanned
        self._unread: list[Path] = []  # the files whose texts are not read yet (last first)
        self._text_store: dict[str, str | None] | None = {}  # str path -> its text (text())
        self._asked: set[str] = set()  # the names asked before the index (CALL_SCANS of them at most)
        self._elsewhere: dict[str, str] = {}  # name -> a file found calling it (the search stopped there)
        self._defined: frozenset[str] | None = None  # every name a `def` of some file may define
        self._src: list[Path] | None = None  # [root/src] when that folder exists (bases)
        self._listings: dict[str, frozenset[str]] = {}  # folder -> its entry names, case-folded (_may_hold)
        self._define_asks = 0  # defines() questions before that set was built
        self._listed: dict[str, bool] = {}  # every .py file the listing saw -> it is a symbolic link
        self._library_asked: dict[str, set[Path]] = {}  # importers() of library modules, without the index
        self._by_folder: dict[str, list[Path]] | None = None  # a library folder -> its files (listed order)
        self._outside_library: list[Path] = []  # the files outside every known library's tree

    def files(self) -> list[Path]:
        """Every ``.py`` file under the root (skipped folders, and folders holding a root marker
        of their own: other projects, left out), sorted; listed once. Empty when the project
        has more than :data:`MAX_FILES`."""
        if self._files is None:
            found: list[Path] = []
            listed = self._listed = {}
            for folder, names in _walk(str(self.root)):
                here = None  # the folder is inside (its real path: once per folder, not per file)
                for n, entry in names:
                    if not n.endswith(".py") or not _is_file(entry):
                        continue
                    full = os.path.join(folder, n)
                    link = _is_link(entry)
                    listed[full] = link
                    if n.startswith(".") or link:
                        inside = self._inside(Path(full))  # a link to a file outside: not read
                    else:  # a plain file's real path is its folder's, plus its name
                        if here is None:
                            here = self._inside(Path(folder))
                        inside = here
                    if inside:
                        found.append(Path(full))
                if len(found) > MAX_FILES:
                    found = []
                    break
            self._files = found
        return self._files

    def listed_link(self, path: str) -> bool | None:
        """Whether the ``.py`` file ``path`` (a ``str``, as :meth:`files` joins it: the root,
        then its folders and name) was a symbolic link when the files were listed; ``None``
        when the listing did not see it (another spelling of the path, or no such file)."""
        self.files()
        return self._listed.get(path)

    def bases(self, importer: Path) -> list[Path]:
        """Where an absolute import of ``importer`` is looked up, first first: the importer's
        own folder (a script's siblings), the root, ``root/src``."""
        out = [importer.parent, self.root]
        if self._src is None:  # (asked once per root, not once per import)
            src = self.root / "src"
            self._src = [src] if src.is_dir() else []
        out.extend(self._src)
        return list(dict.fromkeys(out))

    def resolve_module(self, importer: Path, module: str, level: int = 0) -> Path | None:
        """The file of module ``module`` as ``importer`` imports it (``level`` leading dots for
        a relative import): ``a/b.py`` or ``a/b/__init__.py``, or the package folder of a
        namespace package; ``None`` when it is no file of the project."""
        key = (os.path.dirname(importer), module, level)  # (a string: hashing a Path costs more than the lookup)
        if key in self._resolved:
            return self._resolved[key]
        parts = [p for p in module.split(".") if p]
        if level and self._in_library(importer):
            found = None  # (`from . import config` inside torch/: the library, as `import torch...` is)
        elif level:
            base = importer.parent
            for _ in range(level - 1):
                base = base.parent
            found = _find(base, parts) if self._inside(base) and self._may_hold(base, parts) else None
        else:
            found = None
            if parts and parts[0] not in KNOWN_LIBRARIES:
                for base in self.bases(importer):
                    found = _find(base, parts) if self._may_hold(base, parts) else None
                    if found is not None:
                        break
        if found is not None and not self._inside(found):
            found = None
        self._resolved[key] = found
        return found

    def _in_library(self, path: Path) -> bool:
        """``path`` lies in a top-level package of :data:`KNOWN_LIBRARIES` under the root
        (``torch/_dynamo/testing.py`` in torch's own tree): its relative imports are the
        library's modules, as an absolute import of the library is, never project modules."""
        try:
            rel = path.relative_to(self.root).parts
        except ValueError:
            return False
        return len(rel) > 1 and rel[0] in KNOWN_LIBRARIES

    def submodule(self, package: Path, name: str) -> Path | None:
        """``name`` as a submodule of the package whose file (``__init__.py``) or folder is ``package``."""
        folder = package if package.is_dir() else package.parent if package.name == "__init__.py" else None
        found = _find(folder, [name]) if folder is not None and self._may_hold(folder, [name]) else None
        return found if found is not None and self._inside(found) else None

    def _may_hold(self, base, parts: list[str]) -> bool:
        """Folder ``base`` may hold ``parts[0]`` (``a.py`` or ``a/``) as :func:`_find` would
        find it: its entry names, listed once per folder and process (a set lookup instead
        of up to three ``stat`` calls for each module asked: most imports of a tree name the
        standard library or third-party packages, from every folder). Compared case-folded
        (a case-insensitive file system finds ``Foo.py`` for ``foo``); true when the name is
        not ASCII (a file system may normalise it) or the folder cannot be listed."""
        if not parts or not parts[0].isascii():
            return True
        key = str(base)
        names = self._listings.get(key)
        if names is None:
            try:
                names = self._listings[key] = frozenset(n.casefold() for n in os.listdir(key))
            except (OSError, ValueError):
                names = self._listings[key] = _ANY
        if names is _ANY:
            return True
        first = parts[0].casefold()
        return first in names or first + ".py" in names

    def _inside(self, path: Path) -> bool:
        """``path`` is under the root, in no skipped folder, and so is what it resolves to: a
        symlinked folder or file pointing out of the project is outside (never opened)."""
        try:
            rel = path.relative_to(self.root)
        except ValueError:
            return False
        if any(p in SKIP_DIRS or p.startswith(".") for p in rel.parts):
            return False
        real = Path(os.path.realpath(path))
        return real == self._real_root or real.is_relative_to(self._real_root)

    def calling(self, name: str) -> set[str]:
        """The files (``str`` paths) whose text calls something named ``name``: ``name(`` or
        ``.name(`` (whitespace before the parenthesis allowed; every file counts, also one
        that never names torch), or names it in a string literal (``fire("on_step_end")``,
        ``getattr(cb, "on_step_end")``: a call by name). A text search, not a parse: a necessary condition of a call.

        The first :data:`CALL_SCANS` names are answered by a scan for that name (the files'
        texts kept meanwhile; a substring test, then the pattern on the files holding the
        name): a project asked about a few names (a big tree of plain code) never pays for
        the index. The next name builds the index of every called name in every file (one
        regular-expression pass) and the texts are dropped. Either way the same answer."""
        if self._called is not None:
            return self._called.get(name, _NO_FILES)
        found = self._scanned.get(name)
        if found is not None:
            return found
        if name not in self._asked and len(self._asked) >= CALL_SCANS:
            index: dict[str, set[str]] = {}
            texts = list(self._text_items())
            for path, text in texts:
                for called in _called_names(text):
                    index.setdefault(called, set()).add(path)
            if self._defined is None:  # (the texts are dropped below: what defines() reads)
                self._defined = _defined_names(text for _, text in texts)
            self._called, self._texts, self._scanned, self._elsewhere = index, None, {}, {}
            self._text_store = None  # (the texts are dropped: a file asked again is read again)
            return index.get(name, _NO_FILES)
        self._asked.add(name)
        found = self._scanned[name] = {path for path, text in self._text_items() if _calls_named(text, name)}
        return found

    def called_elsewhere(self, name: str, path: str) -> bool:
        """Some file other than ``path`` (a ``str`` path) calls something named ``name``
        (:meth:`calling`'s answer, without its set where that is not known yet: the texts are
        read and searched only until one such file is found, so a common name costs a few
        files, not the project)."""
        if self._called is None and name not in self._scanned:
            hit = self._elsewhere.get(name)
            if hit is not None and hit != path:
                return True
        if self._called is None and name not in self._scanned and (
                name in self._asked or len(self._asked) < CALL_SCANS):  # (else: the index, as calling builds it)
            self._asked.add(name)
            for other, text in self._text_items():
                if other != path and _calls_named(text, name):
                    self._elsewhere[name] = other
                    return True
            # none elsewhere: the whole project was searched, so calling(name) is known
            mine = next((text for other, text in self._text_items() if other == path), None)
            self._scanned[name] = {path} if mine is not None and _calls_named(mine, name) else set()
        found = self.calling(name)
        return bool(found) and (len(found) > 1 or path not in found)

    def called_nowhere_else(self, name: str, path: str) -> bool:
        """No file other than ``path`` calls something named ``name``, known without a search:
        the index of every called name is built (:meth:`calling`) and says so. ``False`` while
        it is not (unknown here: :meth:`called_elsewhere` searches)."""
        if self._called is None:
            return False
        found = self._called.get(name, _NO_FILES)
        return not found or (len(found) == 1 and path in found)

    def defines(self, name: str) -> bool:
        """Some file of the project may define a function or method named ``name`` (``def
        name(`` / ``async def name(``): a text search, once per root for every name (the
        words after ``def`` in every file, read with the texts :meth:`calling` reads), so
        asking it for each call is a set lookup. A necessary condition of a project
        function of that name: every function a summary knows is a ``def`` of its module.
        True when the files cannot be listed (more than :data:`MAX_FILES`) or ``name`` is
        not ASCII (a file in another encoding may spell it differently in UTF-8), and for
        the first questions, as many as the project has files (the set costs a pass over
        every file's text: a big tree of plain code that asks a few hundred questions, as
        torch's own does, never builds it; the index of called names builds it anyway)."""
        if self._defined is None:
            self._define_asks += 1
            listed = self.files()
            if not listed or self._define_asks <= len(listed):
                return True  # (the set costs a pass over every file: built once the questions outnumber them)
            self._defined = _defined_names(text for _, text in self._text_items())
        return name in self._defined or not name.isascii()

    def text(self, path: Path) -> str | None:
        """:func:`read_text` of ``path``, read once per process while the project's texts are
        kept (they are dropped with the others when the index of called names is built): the
        reverse-import index, the reach index's text tests and the name searches read each
        file once instead of once each."""
        key = str(path)
        texts = self._text_store
        if texts is None:
            return read_text(path)
        found = texts.get(key, _UNSEEN)
        if type(found) is bytes:  # (read by mentions(): decoded when first asked)
            found = texts[key] = found.decode("utf-8", errors="replace")
        elif found is _UNSEEN:
            found = texts[key] = read_text(path)
        return found

    def data(self, path: Path) -> bytes | None:
        """:func:`read_bytes` of ``path``: the bytes :meth:`mentions` kept when they are not
        decoded yet (a digest of every file of a big tree reads none of them again)."""
        texts = self._text_store
        found = texts.get(str(path)) if texts is not None else None
        return found if type(found) is bytes else read_bytes(path)

    def mentions(self, path: Path, word: bytes) -> bool:
        """The bytes of ``path`` contain the ASCII ``word`` (``b"torch_xla"``): as ``word``
        in its :meth:`text` (UTF-8 decoding with replacement keeps every ASCII byte), without
        decoding it; the bytes are kept in its place while the texts are (a search of every
        file of a big tree for one word decodes none of them)."""
        key = str(path)
        texts = self._text_store
        found = texts.get(key, _UNSEEN) if texts is not None else _UNSEEN
        if found is _UNSEEN:
            found = read_bytes(path)
            if texts is not None:
                texts[key] = found
        if found is None:
            return False
        return (word in found) if type(found) is bytes else (word.decode("ascii") in found)

    def _text_items(self):
        """``(str path, text)`` of the project's files with a non-empty text, in
        :meth:`files` order, each read once (kept until the index of called names is built)."""
        if self._texts is None:
            self._texts, self._unread = [], list(self.files())
            self._unread.reverse()
        texts, unread = self._texts, self._unread
        i = 0
        while True:
            if i < len(texts):
                yield texts[i]
                i += 1
            elif unread:
                p = unread.pop()
                text = self.text(p)
                if text:
                    texts.append((str(p), text))
            else:
                return

    def importers(self, target: Path) -> set[Path]:
        """Files whose text imports ``target`` (a candidate set: a regular expression over
        import statements, built once for the whole project; a dynamic import is not seen).

        A module of a known library's own tree (``torch/_tensor.py`` in torch's, see
        :meth:`_in_library`) is answered without that index: only a file outside the
        library (a relative import up to the root) or one in a folder above it inside the
        library (a bare sibling import, ``import testing`` in ``torch/_dynamo/``) can import
        it -- the library's relative imports and every absolute import of its name are the
        library, never project files -- so only their imports are read (a big tree of
        library code asked about a few of its modules reads a few folders, not the tree)."""
        if self._reverse is None and self._in_library(target):
            return self._library_importers(target)
        if self._reverse is None:
            reverse: dict[Path, set[Path]] = {}
            for path in self.files():
                for found in self.imports_of(path):
                    reverse.setdefault(found, set()).add(path)
            self._reverse = reverse
        return self._reverse.get(target, set())

    def _library_importers(self, target: Path) -> set[Path]:
        """:meth:`importers` of ``target``, a module inside a known library's tree, from the
        files that can import it (once per module and process)."""
        key = str(target)
        found = self._library_asked.get(key)
        if found is not None:
            return found
        if self._by_folder is None:
            by_folder: dict[str, list[Path]] = {}
            outside: list[Path] = []
            for p in self.files():
                (by_folder.setdefault(os.path.dirname(p), []) if self._in_library(p) else outside).append(p)
            self._by_folder, self._outside_library = by_folder, outside
        candidates = list(self._outside_library)
        top = os.path.join(self.root, target.relative_to(self.root).parts[0])
        folder = os.path.dirname(target)
        while True:  # the target's folder and each above it, up to the library's own
            candidates.extend(self._by_folder.get(folder, ()))
            if folder == top or len(folder) <= len(top):
                break
            folder = os.path.dirname(folder)
        found = self._library_asked[key] = {p for p in candidates if target in self.imports_of(p)}
        return found

    def imports_of(self, path: Path) -> set[Path]:
        """Project files the text of ``path`` imports (the same candidate reading as
        :meth:`importers`; memoised per file)."""
        found = self._forward.get(path)
        if found is None:
            text = self.text(path)
            found = set() if text is None else set(self._imported_files(path, text)) - {path}
            self._forward[path] = found
        return found

    def _imported_files(self, path: Path, text: str):
        folder = os.path.dirname(path)
        resolved = self._resolved
        library = None  # (asked once: whether the file's relative imports are the library's)
        for m in _import_statements(text):
            if m.group(4) is not None:  # import a.b as c, d
                for item in m.group(4).split(","):
                    name = item.split(" as ")[0].strip()
                    if _DOTTED(name):
                        parts = name.split(".")
                        if parts[0] in KNOWN_LIBRARIES:
                            continue  # (`import torch.nn`: the library, no prefix is a project file)
                        for i in range(1, len(parts) + 1):
                            module = ".".join(parts[:i])
                            found = resolved.get((folder, module, 0), _UNSEEN)  # (resolve_module's memo)
                            if found is _UNSEEN:
                                found = self.resolve_module(path, module)
                            if found is not None:
                                yield found
            else:
                level, module = len(m.group(1)), m.group(2)
                if not level and module.partition(".")[0] in KNOWN_LIBRARIES:
                    continue  # (`from torch.nn import Module`: the library, as resolve_module says)
                if level:
                    if library is None:
                        library = self._in_library(path)
                    if library:
                        continue  # (`from . import config` inside torch/: the library, as resolve_module says)
                found = resolved.get((folder, module, level), _UNSEEN)
                if found is _UNSEEN:
                    found = self.resolve_module(path, module, level) if module or level else None
                if found is not None:
                    yield found
                    for item in m.group(3).strip("()").split(","):
                        name = item.split(" as ")[0].strip()
                        if _NAME(name):
                            sub = self.submodule(found, name)
                            if sub is not None:
                                yield sub


def _walk(top: str, nested: bool = False):
    """``(folder, [(name, entry), ...])`` of every folder under ``top``, top first, the
    folders in name order (skipped and hidden ones left out, symbolic links to folders not
    followed) and each folder's other entries sorted by name: what ``os.walk`` gives, from
    one ``scandir`` per folder (the entries' types need no ``stat`` call a file).

    A folder below ``top`` holding a root marker (:data:`ROOT_MARKERS`) is another project,
    left out with everything under it: its files' root is that folder (:func:`root_from`),
    so each file belongs to one project, the one its own lint reads."""
    try:
        with os.scandir(top) as it:
            entries = list(it)
    except OSError:
        return
    if nested and any(e.name in ROOT_MARKERS for e in entries):
        return
    dirs, names = [], []
    for e in entries:
        try:
            is_dir = e.is_dir()
        except OSError:
            is_dir = False
        if is_dir:
            if e.name not in SKIP_DIRS and not e.name.startswith("."):
                dirs.append((e.name, e))
        else:
            names.append((e.name, e))
    names.sort(key=lambda x: x[0])
    yield top, names
    for name, e in sorted(dirs, key=lambda x: x[0]):
        if not _is_link(e):
            yield from _walk(os.path.join(top, name), True)


def _is_file(entry) -> bool:
    """``os.path.isfile`` of a ``scandir`` entry (a link followed)."""
    try:
        return entry.is_file()
    except OSError:
        return False


def _is_link(entry) -> bool:
    """``os.path.islink`` of a ``scandir`` entry."""
    try:
        return entry.is_symlink()
    except OSError:
        return False


def _import_statements(text: str):
    """The matches ``_IMPORT_RE.finditer(text)`` gives, found faster: every import statement
    holds the word ``import`` on its first line, so the pattern is tried only at the start
    of a line holding one (a literal search; the pattern's ``^`` tried at every character
    of a large tree cost more than the rest of the reverse index). Same matches, same order."""
    match = _IMPORT_RE.match
    find = text.find
    end = 0  # where the last match ended: the next one starts at a line start at or after it
    tried = -1  # the line start tried last (a line may hold the word twice)
    i = find("import")
    while i >= 0:
        start = text.rfind("\n", 0, i) + 1
        if start >= end and start != tried:
            tried = start
            m = match(text, start)
            if m is not None:
                yield m
                end = m.end()
                i = find("import", max(end, i + 1))
                continue
        i = find("import", i + 1)


_UNSEEN = object()
_ANY: frozenset[str] = frozenset({"\0"})  # (a folder that cannot be listed: it may hold anything)
_DOTTED = re.compile(r"[\w.]+").fullmatch
_NAME = re.compile(r"\w+").fullmatch


_QUOTED = re.compile(r"[\"'](\w+)[\"']")


#: ``(``, whitespace, a word, in the reversed text: a called name read backwards
_CALLED_BACKWARDS = re.compile(r"\(\s*(\w+)")


def _called_names(text: str) -> set[str]:
    """The names ``{a or b for a, b in _CALLED.findall(text)}`` holds, found faster: the word
    right before each ``(`` (whitespace between allowed), read as the word right after each
    ``(`` of the reversed text (a pattern that starts with a literal is searched for that
    literal: no match is tried inside a word, and no Python loop walks back from each
    parenthesis, half the time of that loop), and the quoted words (the two alternatives
    never overlap: a quoted word holds no parenthesis, a called name no quote)."""
    out = set(_QUOTED.findall(text))
    out.update(word[::-1] for word in _CALLED_BACKWARDS.findall(text[::-1]))
    return out


#: ``def``, then the name it defines (``async def`` too; ``xdef y`` also matches: a superset)
_DEFINED = re.compile(r"def[\s\\]+(\w+)")


def _defined_names(texts) -> frozenset[str]:
    """Every word that follows ``def`` (whitespace or a line continuation between) in
    ``texts``: each name a ``def`` statement of those texts defines, and a few more."""
    out: set[str] = set()
    for text in texts:
        out.update(_DEFINED.findall(text))
    return frozenset(out)


_PATTERNS: dict[str, re.Pattern] = {}


def _calls_named(text: str, name: str) -> bool:
    """``text`` calls something named ``name`` (``name(`` / ``.name(``, not ``xname(``) or
    names it in a string literal (``fire("on_step_end")``: a call by name)."""
    if name not in text:
        return False
    pattern = _PATTERNS.get(name)
    if pattern is None:
        pattern = _PATTERNS[name] = re.compile(r"%s\s*\(" % re.escape(name))
    return _calls(text, pattern) or f'"{name}"' in text or f"'{name}'" in text


def _calls(text: str, pattern: re.Pattern) -> bool:
    """``pattern`` (a name, then ``\\s*\\(``) matches in ``text`` where no word character
    comes before it: what ``\\b`` would say, checked by hand (a pattern that starts with a
    literal is searched for that literal, twenty times faster than one that starts with
    ``\\b``). A match right after a word character (``xname(``) hides no other: it ends in
    its parenthesis."""
    for m in pattern.finditer(text):
        i = m.start()
        if not i or not (text[i - 1].isalnum() or text[i - 1] == "_"):  # (\w: alphanumeric or _)
            return True
    return False


def _find(base: Path, parts: list[str]) -> Path | None:
    """``base/a/b.py``, ``base/a/b/__init__.py`` or the folder ``base/a/b`` (a namespace
    package) for ``parts`` ``["a", "b"]`` (``base/__init__.py`` for none), the first that
    exists; string work and three ``stat`` calls at most (pathlib's cost more than the lookup)."""
    if not parts:
        init = os.path.join(base, "__init__.py")
        return Path(init) if os.path.isfile(init) else None
    stem = os.path.join(base, *parts)
    if os.path.isfile(stem + ".py"):
        return Path(stem + ".py")
    init = os.path.join(stem, "__init__.py")
    if os.path.isfile(init):
        return Path(init)
    return Path(stem) if os.path.isdir(stem) else None


def read_regular(path) -> tuple[bytes | None, os.stat_result]:
    """(bytes, stat at the time they were read) of the file at ``path``; the bytes are
    ``None`` when it is no regular file (a named pipe would block until a writer came, a
    device never ends): it is opened without blocking and checked with ``fstat`` before a
    byte is read. Raises ``OSError`` when it cannot be opened or read."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None, info
        chunks = []
        while True:  # os.read may return less than asked
            chunk = os.read(fd, max(info.st_size + 1, 1 << 16))
            if not chunk:
                return b"".join(chunks), info
            chunks.append(chunk)
    finally:
        os.close(fd)


def read_bytes(path: Path) -> bytes | None:
    """The bytes of the regular file ``path`` (:func:`read_regular`); ``None`` when it cannot
    be read or is no regular file."""
    try:
        return read_regular(path)[0]
    except (OSError, ValueError):
        return None


def read_text(path: Path) -> str | None:
    """The file's text (UTF-8, undecodable bytes replaced), ``None`` when it cannot be read."""
    data = read_bytes(path)
    return data.decode("utf-8", errors="replace") if data is not None else None
