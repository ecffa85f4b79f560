"""The pylint adapter: ``pylint --load-plugins=flake8_xla.pylint_plugin``.

One checker named ``xla``. Message ids are derived from the codes, never hand-kept:
``XLA{f}{nn}`` -> ``{letter}7{f}{nn}`` (checker ids 70-79), the letter from the rule's
severity (E crash/hang/wrong result, W performance or porting, C deprecation); the
symbol is the rule's name; the text starts with the XLA code, so ``XLA101 ...`` is
greppable in both tools. A rule whose severity follows ``--xla-version``
(``severity_since``) has one message per letter: ``E7602`` ``xm-save-under-rank-guard``
and ``C7602`` ``xm-save-under-rank-guard-convention``, the one for the target release used. ``XLA000`` (a rule failed on the file) is ``F7000``.

Options ``xla-scope`` and ``xla-version`` (command line, pylintrc, or
``[tool.pylint.xla]`` in pyproject.toml). The module's source is parsed with ``ast`` and
run through the same engine as the flake8 plugin; astroid inference is not used.
"""

from __future__ import annotations

import ast
import warnings

from pylint.checkers import BaseChecker, BaseRawFileChecker
from pylint.constants import WarningScope

from .engine import run
from .registry import all_rules
from .settings import KNOWN_VERSIONS, NEWEST_VERSION, SCOPES, Settings, version_str

INTERNAL_ERROR_ID = "F7000"


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
    for code, cls in sorted(all_rules().items()):
        if code[3] == family:
            for letter in cls.severities():
                msgs[message_id(code, letter)] = (
                    f"{code} %s",
                    cls.name if letter == cls.severity else f"{cls.name}-{_LETTER_WORDS[letter]}",
                    f"{cls.message}; {cls.fix}. See docs/rules/{code}.md of flake8-xla.",
                    _LINE,
                )
    return msgs


_LETTER_WORDS = {"E": "error", "W": "warning", "C": "convention", "R": "refactor", "I": "info"}


class XlaChecker(BaseRawFileChecker):
    """Runs the flake8-xla rules on each module pylint checks (and owns family 0's messages).

    pylint requires every message of one checker to share its checker id, so the other
    families' messages live on message-only checkers of the same name, ``xla``.
    """

    name = "xla"
    msgs = _messages("0")
    options = (
        ("xla-scope", {
            "default": "auto", "type": "choice", "choices": list(SCOPES), "metavar": "<auto|always>",
            "help": "auto: XLA-context rules only in modules that import torch_xla; "
                    "always: treat every module as XLA code (porting a CUDA script).",
        }),
        ("xla-version", {
            "default": version_str(NEWEST_VERSION), "type": "choice",
            "choices": [version_str(v) for v in KNOWN_VERSIONS], "metavar": "<X.Y>",
            "help": "torch_xla release to target (2.0 to 2.9).",
        }),
    )

    def process_module(self, node) -> None:
        settings = Settings(scope=self.linter.config.xla_scope,
                            target_version=tuple(int(p) for p in str(self.linter.config.xla_version).split(".")))
        with node.stream() as stream:
            source = stream.read().decode(node.file_encoding or "utf-8", errors="replace")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tree = ast.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return  # pylint reports the syntax error itself
        rules = all_rules()
        for f in run(tree, settings, source):
            msgid = INTERNAL_ERROR_ID if f.code == "XLA000" else message_id(
                f.code, rules[f.code].severity_for(settings.target_version))
            self.add_message(msgid, line=f.line, col_offset=f.col, args=(f.message,))


def _family_checkers() -> list[type]:
    families = sorted({code[3] for code in all_rules()} - {"0"})
    return [type(f"XlaFamily{f}Checker", (BaseChecker,), {"name": "xla", "msgs": _messages(f), "options": ()})
            for f in families]


def register(linter) -> None:
    """pylint's plugin hook: the runner checker and one message-only checker per family."""
    linter.register_checker(XlaChecker(linter))
    for cls in _family_checkers():
        linter.register_checker(cls(linter))
