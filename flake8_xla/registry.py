"""Rule base class, findings and the registry every adapter reads.

A rule is a class with a code (``XLA`` + 3 digits), a kebab-case name, a message (the
problem), a fix (what to write instead), a docstring in Ruff's section order, ``bad`` and
``good`` examples that run as tests, and ``check(model)`` yielding findings.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from typing import ClassVar, Iterator

from .settings import DEFAULT_DOCS_URL, DEFAULT_INDEX_URL, Settings, fill_docs_url

CODE_RE = re.compile(r"^XLA\d{3}$")
XLA_CONTEXT = "xla-context"  # fires only in XLA code (module imports torch_xla, or --xla-scope=always)
ANYWHERE = "anywhere"  # fires wherever a torch_xla name resolves (deprecations, signatures)
#: fires wherever torch_xla's environment variables are set, whatever the module imports
#: (launchers set them before torch_xla is imported, Accelerate scripts never import it)
ENV = "env"
#: the fast path's text test for ENV rules: a variable prefix and a way to set it
ENV_PREFIXES = ("XLA_", "PJRT_", "XRT_")
ENV_SETTERS = ("environ", "putenv")
#: fires in modules that never import torch_xla (XLA406: an ``"xla"`` device nothing
#: registered); the fast path's text test for it is :data:`XLA_DEVICE_TEXTS`, a quoted ``xla``
#: (``"xla"``, ``'xla:0'``, ``f"xla:{i}"``): JAX code naming ``xla_bridge`` stays on the fast path
UNIMPORTED = "unimported"
XLA_DEVICE_TEXTS = ('"xla', "'xla")

#: Every registered rule class, by code, in registration order.
RULES: dict[str, type["Rule"]] = {}

#: the code of the one finding the flake8 and pylint plugins report on a notebook (``.ipynb``)
#: named to them: they read it as Python (its JSON parses as an expression) and would pass it
NOTEBOOK_CODE = "XLA099"
#: Codes that are not rules (no page, never from the engine's rules): code -> (name, what
#: it means). The rule index (docs/index.md) lists them.
NOT_RULES = {
    "XLA000": ("internal-error", "a rule failed on this file (please report it); the other rules still ran"),
    NOTEBOOK_CODE: ("notebook-not-linted", "flake8 or pylint was given a notebook (`.ipynb`), which it reads as "
                    "Python: the notebook's cells were not linted. Run `flake8-xla nb.ipynb` (cells, magics, "
                    "`--fix`) or `nbqa flake8_xla nb.ipynb` instead; reported once, on line 1 (Python code sent "
                    "under a `.ipynb` name, as editors send cells, is linted as usual)"),
}


def notebook_finding(filename: str | None, tree: ast.AST, tool: str) -> "Finding | None":
    """The one finding for a notebook file given to ``tool`` (``flake8``, ``pylint``), whose
    JSON text parsed as the module ``tree``; None when ``filename`` is no ``.ipynb`` file or
    ``tree`` is Python code under that name (an editor or flake8-nb passing a notebook's
    cells: linted as any module)."""
    from .notebook import is_notebook

    if not is_notebook(filename) or not _is_notebook_json(tree):
        return None
    name = re.split(r"[\\/]", str(filename))[-1]
    name = name if len(name) <= 40 and re.fullmatch(r"[\w.+-]+", name) else "NOTEBOOK.ipynb"
    return Finding(1, 0, NOTEBOOK_CODE, f"{tool} does not lint notebooks; run flake8-xla {name} "
                                        f"(or nbqa flake8_xla {name})")


def _is_notebook_json(tree: ast.AST) -> bool:
    """The module is one dict display with a ``"cells"``, ``"worksheets"`` or ``"nbformat"``
    key: a notebook's JSON read as Python."""
    body = getattr(tree, "body", None)
    if not isinstance(body, list) or len(body) != 1 or not isinstance(body[0], ast.Expr):
        return False
    value = body[0].value
    return isinstance(value, ast.Dict) and any(
        isinstance(k, ast.Constant) and k.value in ("cells", "worksheets", "nbformat") for k in value.keys)


@dataclasses.dataclass(frozen=True, order=True)
class Finding:
    """One reported problem. ``col`` is 0-based (flake8 adds 1 when printing)."""

    line: int
    col: int
    code: str
    message: str  # the full text after the code: "problem; fix"
    #: where the reported node ends (for "one finding per fix": a finding that supersedes
    #: others covers the findings inside its node); not part of equality or order
    end: tuple[int, int] | None = dataclasses.field(default=None, compare=False, repr=False)
    #: whether it supersedes the findings inside its node (its rule's ``supersedes``): false
    #: where its fix leaves their problem in place (XLA505 moving an ``xm.mark_step()`` that
    #: stays deprecated); not part of equality or order
    covers: bool = dataclasses.field(default=True, compare=False, repr=False)

    @property
    def text(self) -> str:
        return f"{self.code} {self.message}"


class Rule:
    """Base class of every rule. Subclasses set the class attributes and ``check``."""

    code: ClassVar[str]
    name: ClassVar[str]
    message: ClassVar[str]
    fix: ClassVar[str]
    scope: ClassVar[str] = XLA_CONTEXT
    #: codes this rule replaces when both fire on the same node ("one finding per fix")
    supersedes: ClassVar[tuple[str, ...]] = ()
    #: severity for the pylint message id letter: "E" crash/hang/wrong result, "W" performance
    #: or porting, "C" deprecation
    severity: ClassVar[str] = "E"
    #: a severity that changes with the target release: ``(("2.1", "C"),)`` reports with
    #: letter ``C`` from torch_xla 2.1 on (pylint registers one message id per letter)
    severity_since: ClassVar[tuple[tuple[str, str], ...]] = ()
    #: torch_xla versions the rule applies to, as "X.Y+" or "X.Y-X.Z", for the docs
    versions: ClassVar[str] = "2.0+"
    #: a hint (advice worth a look, not a defect): off in a plain ``flake8`` run through
    #: flake8's default-ignore (as bugbear's B9), on once XLA is selected explicitly
    #: (``--select=XLA``, ``--extend-select=XLA``); pylint leaves it disabled until enabled
    hint: ClassVar[bool] = False
    #: where a finding is reported, for ``# noqa`` (the docs page says it): the node whose
    #: first line carries the finding, e.g. "the `xmp.spawn(...)` call"
    reported_at: ClassVar[str] = ""
    #: what ``flake8-xla --fix`` may do (``flake8_xla/fix/``): "safe", "unsafe" (only with
    #: ``--unsafe-fixes``) or "none"
    fix_applicability: ClassVar[str] = "none"
    bad: ClassVar[list[str]] = []
    good: ClassVar[list[str]] = []

    @classmethod
    def severities(cls) -> list[str]:
        """Every severity letter the rule can report with, ``severity`` first."""
        out = [cls.severity]
        out += [letter for _, letter in cls.severity_since if letter not in out]
        return out

    @classmethod
    def severity_for(cls, version: tuple[int, int]) -> str:
        """The severity letter for target release ``version``."""
        letter = cls.severity
        for since, value in cls.severity_since:
            if tuple(version) >= tuple(int(p) for p in since.split(".")):
                letter = value
        return letter

    def __init__(self, settings: Settings):
        self.settings = settings

    def check(self, model) -> Iterator[Finding]:  # pragma: no cover - abstract
        raise NotImplementedError

    def finding(self, node: ast.AST, message: str | None = None, fix: str | None = None) -> Finding:
        """A finding at ``node`` with ``message; fix`` (the class defaults when omitted)."""
        text = f"{message or self.message}; {fix or self.fix}"
        line, col = getattr(node, "lineno", 1), getattr(node, "col_offset", 0)
        end_line = getattr(node, "end_lineno", None)
        end = (end_line, getattr(node, "end_col_offset", None) or 0) if end_line is not None else None
        return Finding(line, col, self.code, text, end)


def rule(cls: type[Rule]) -> type[Rule]:
    """Class decorator: validate and register a rule."""
    if not CODE_RE.match(cls.code):
        raise ValueError(f"bad rule code {cls.code!r}")
    if cls.code in RULES:
        raise ValueError(f"duplicate rule code {cls.code}")
    if not re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", cls.name):
        raise ValueError(f"rule name must be kebab-case: {cls.name!r}")
    RULES[cls.code] = cls
    return cls


def all_rules() -> dict[str, type[Rule]]:
    """Every rule, importing the rule modules on first use."""
    from . import rules  # noqa: F401  (registers the rule classes)

    return RULES


def hint_codes() -> list[str]:
    """The codes of the hint-level rules, sorted: flake8's default-ignore list."""
    return sorted(code for code, cls in all_rules().items() if cls.hint)


def doc_url(code: str, settings: Settings | None = None) -> str | None:
    """The URL of a rule's page: ``settings.docs_url`` (``xla-docs-url``, where the user hosts
    the pages) with ``{code}`` (``XLA101``) and ``{name}`` (``ddp-without-gradient-as-bucket-view``)
    filled in; ``XLA000`` and unknown codes get the index (``{code}`` = ``index``; with the
    default template, :data:`~flake8_xla.settings.DEFAULT_INDEX_URL`). The default template is
    :data:`~flake8_xla.settings.DEFAULT_DOCS_URL`, the installed release's pages; ``None``
    when the settings have no template."""
    template = (settings or Settings()).docs_url
    if template is None:
        return None
    cls = all_rules().get(code)
    if cls is None and template == DEFAULT_DOCS_URL:
        return DEFAULT_INDEX_URL
    return fill_docs_url(template, code if cls else "index", cls.name if cls else "index")


def is_selected(code: str, select=None, ignore=None, extend_select=(), extend_ignore=()) -> bool:
    """Whether flake8, given these options, reports ``code`` (an ``XLA###`` code).

    flake8's own decision (its ``DecisionEngine``) with what this plugin registers: ``XLA``
    selected by default and the hints (:func:`hint_codes`) ignored by default. So a hint is
    off unless XLA (or a prefix of the hint) is selected explicitly, and an explicit ignore
    of a longer prefix (``extend-ignore = XLA304``) wins over ``--select=XLA``. ``select`` /
    ``ignore`` are ``None`` when not given (a given list replaces the defaults, as in
    flake8); every argument is a list of code prefixes. For front ends that mirror flake8
    (the CLI).
    """
    import argparse

    from flake8.style_guide import Decision, DecisionEngine

    options = argparse.Namespace(
        select=list(select) if select is not None else None, ignore=list(ignore) if ignore is not None else None,
        extend_select=list(extend_select or ()), extend_ignore=list(extend_ignore or ()),
        extended_default_select=["XLA"], extended_default_ignore=hint_codes())
    return DecisionEngine(options).decision_for(code) is Decision.Selected
