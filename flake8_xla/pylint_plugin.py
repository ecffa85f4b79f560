"""The pylint adapter: ``pylint --load-plugins=flake8_xla.pylint_plugin``.

One checker named ``xla``. Message ids are derived from the codes, never hand-kept:
``XLA{f}{nn}`` -> ``{letter}7{f}{nn}`` (checker ids 70-79), the letter from the rule's
severity (E crash/hang/wrong result, W performance or porting, C deprecation); the
symbol is the rule's name; the text starts with the XLA code, so ``XLA101 ...`` is
greppable in both tools. A rule whose severity follows ``--xla-version``
(``severity_since``) has one message per letter: ``E7602`` ``xm-save-under-rank-guard``
and ``C7602`` ``xm-save-under-rank-guard-convention``, the one for the target release used.
``XLA000`` (a rule failed on the file) is ``F7000``; ``XLA099`` (a notebook named to pylint,
which reads it as Python: run ``flake8-xla`` on it) is ``F7099``.

Options ``xla-scope``, ``xla-version``, ``xla-reducing-calls``, ``xla-launchers``, ``xla-docs-url``,
``xla-project`` and ``xla-baseline`` (command line, pylintrc, or ``[tool.pylint.xla]`` in
pyproject.toml); with ``xla-baseline`` the findings the baseline file records are not reported. Hint-level rules
are disabled by default (``default_enabled=False``) and come on with ``--enable=xla``
(the checker) or their own name, as flake8 turns them on when XLA is selected. The module's source is parsed with ``ast`` and
run through the same engine as the flake8 plugin; astroid inference is not used.
"""

from __future__ import annotations

import ast
import sys
import warnings

from pylint.checkers import BaseRawFileChecker
from pylint.constants import WarningScope

from .baseline import filter_lines
from .engine import run
from .lines import universal_lines
from .registry import NOTEBOOK_CODE, all_rules, notebook_finding
from .settings import OPTIONS, Settings, SettingsError, from_options

INTERNAL_ERROR_ID = "F7000"
#: a notebook named to pylint (its cells were not linted): ``XLA099``
NOTEBOOK_ID = "F7099"


def message_id(code: str, severity: str) -> str:
    """``XLA101`` with severity ``E`` -> ``E7101``."""
    return f"{severity}7{code[3]}{code[4:]}"


_LINE = {"scope": WarningScope.LINE}  # reported by line and column, not on an astroid node


def _messages(family: str) -> dict[str, tuple]:
    """The pylint message definitions of one family (pylint wants one checker id per checker)."""
    msgs = {}
    if family == "0":
        msgs[INTERNAL_ERROR_ID] = (
            "XLA000 %s",
            "xla-internal-error",
            "A flake8-xla rule failed on this module; the other rules still ran. Please report it.",
            _LINE,
        )
        msgs[NOTEBOOK_ID] = (
            f"{NOTEBOOK_CODE} %s",
            "xla-notebook-not-linted",
            "pylint was given a notebook (.ipynb), which it reads as Python; run flake8-xla on it.",
            _LINE,
        )
    for code, cls in sorted(all_rules().items()):
        if code[3] == family:
            for letter in cls.severities():
                msgs[message_id(code, letter)] = (
                    f"{code} %s",
                    cls.name if letter == cls.severity else f"{cls.name}-{_LETTER_WORDS[letter]}",
                    f"{cls.message}; {cls.fix}. `flake8-xla rule {code}` explains it.",
                    {**_LINE, "default_enabled": False} if cls.hint else _LINE,
                )
    return msgs


_LETTER_WORDS = {"E": "error", "W": "warning", "C": "convention", "R": "refactor", "I": "info"}


#: pylint's exit status for a usage error (its status bits: 2 means "an error message was issued")
USAGE_ERROR = 32


def _settings(config) -> Settings:
    """The validated settings of pylint's config (``settings.from_options``: the same values
    and the same one-line error as under flake8 and the CLI). A bad value, from the command
    line or a config file, prints ``pylint: error: option --NAME: ...`` and exits 32 (pylint's
    usage error, as for its own bad values in a config file)."""
    try:
        return from_options({opt.name: getattr(config, opt.name.replace("-", "_"), None) for opt in OPTIONS})
    except SettingsError as exc:
        sys.stderr.write(f"pylint: error: {exc}\n")
        raise SystemExit(USAGE_ERROR) from None


def _module_findings(linter, node) -> list:
    """The engine's findings for one module, computed once and shared by the family checkers."""
    cached = getattr(linter, "_flake8_xla_findings", None)
    if cached is not None and cached[0] is node:
        return cached[1]
    with node.stream() as stream:
        source = stream.read().decode(node.file_encoding or "utf-8", errors="replace")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        findings = []  # pylint reports the syntax error itself
    else:
        settings = _settings(linter.config)
        notebook = notebook_finding(node.file, tree, "pylint")
        # a notebook's JSON parsed as Python: say to lint it with flake8-xla instead
        findings = [notebook] if notebook else run(tree, settings, source, filename=node.file or None)
        if settings.baseline and node.file and not notebook:
            try:
                findings = filter_lines(settings, node.file, findings, universal_lines(source))
            except SettingsError as exc:  # the file changed or went away since the run began
                sys.stderr.write(f"pylint: error: {exc}\n")
                raise SystemExit(USAGE_ERROR) from None
    linter._flake8_xla_findings = (node, findings)
    return findings


class _FamilyChecker(BaseRawFileChecker):
    """Reports the findings of one family (``XLA{family}##``) on each module pylint checks.

    pylint requires every message of one checker to share its checker id, so each family's
    messages live on their own checker, all named ``xla``; pylint runs a checker only while
    one of its messages is enabled (``--disable=all --enable=W7304`` runs family 3's alone).
    The engine runs once per module whichever checkers run.
    """

    name = "xla"
    family = ""
    options = ()

    def process_module(self, node) -> None:
        rules = all_rules()
        version = None
        for f in _module_findings(self.linter, node):
            if f.code in ("XLA000", NOTEBOOK_CODE):
                if self.family == "0":
                    msgid = INTERNAL_ERROR_ID if f.code == "XLA000" else NOTEBOOK_ID
                    self.add_message(msgid, line=f.line, col_offset=f.col, args=(f.message,))
            elif f.code[3] == self.family:
                if version is None:
                    version = _settings(self.linter.config).target_version
                msgid = message_id(f.code, rules[f.code].severity_for(version))
                self.add_message(msgid, line=f.line, col_offset=f.col, args=(f.message,))


class XlaChecker(_FamilyChecker):
    """Family 0 and ``F7000``, and the options of the ``xla`` checker."""

    family = "0"
    msgs = _messages("0")
    # every value is read as a string and validated by settings.from_options, as under flake8
    # and the CLI (pylint's own "choice" type would accept fewer spellings, with other words)
    options = tuple(
        (opt.name, {"default": opt.default, "type": "csv" if opt.multiple else "string",
                    "metavar": f"<{opt.metavar}>", "help": opt.help})
        for opt in OPTIONS
    )

    def open(self) -> None:
        """Validate the options once, before the first module (a bad value stops pylint)."""
        _settings(self.linter.config)


def _family_checkers() -> list[type]:
    families = sorted({code[3] for code in all_rules()} - {"0"})
    return [type(f"XlaFamily{f}Checker", (_FamilyChecker,), {"family": f, "msgs": _messages(f)})
            for f in families]


def register(linter) -> None:
    """pylint's plugin hook: one checker per family, all named ``xla`` (family 0's holds the options)."""
    linter.register_checker(XlaChecker(linter))
    for cls in _family_checkers():
        linter.register_checker(cls(linter))
