"""The pylint adapter: ``pylint --load-plugins=flake8_xla.pylint_plugin``.

One checker named ``xla``. Message ids are derived from the codes, never hand-kept:
``XLA{f}{nn}`` -> ``{letter}7{f}{nn}`` (checker ids 70-79), the letter from the rule's
severity (E crash/hang/wrong result, W performance or porting, C deprecation); the
symbol is the rule's name; the text starts with the XLA code, so ``XLA101 ...`` is
greppable in both tools. ``XLA000`` (a rule failed on the file) is ``F7000``.

Options ``xla-scope`` and ``xla-version`` (command line, pylintrc, or
``[tool.pylint.xla]`` in pyproject.toml). The module's source is parsed with ``ast`` and
run through the same engine as the flake8 plugin; astroid inference is not used.
"""

from __future__ import annotations

import ast
import sys
import warnings

from pylint.checkers import BaseChecker, BaseRawFileChecker
from pylint.constants import WarningScope

from .engine import run
from .registry import all_rules
from .settings import OPTIONS, Settings, SettingsError, from_options

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
            msgs[message_id(code, cls.severity)] = (
                f"{code} %s",
                cls.name,
                f"{cls.message}; {cls.fix}. See docs/rules/{code}.md of flake8-xla.",
                _LINE,
            )
    return msgs


def _settings(config) -> Settings:
    """The validated settings of pylint's config (``settings.from_options``: the same values
    and the same one-line error as under flake8 and the CLI); a bad value exits 2."""
    try:
        return from_options({opt.name: getattr(config, opt.name.replace("-", "_"), None) for opt in OPTIONS})
    except SettingsError as exc:
        sys.stderr.write(f"pylint: error: {exc}\n")
        raise SystemExit(2) from None


class XlaChecker(BaseRawFileChecker):
    """Runs the flake8-xla rules on each module pylint checks (and owns family 0's messages).

    pylint requires every message of one checker to share its checker id, so the other
    families' messages live on message-only checkers of the same name, ``xla``.
    """

    name = "xla"
    msgs = _messages("0")
    # every value is read as a string and validated by settings.from_options, as under flake8
    # and the CLI (pylint's own "choice" type would accept fewer spellings, with other words)
    options = tuple(
        (opt.name, {"default": opt.default, "type": "csv" if opt.multiple else "string",
                    "metavar": f"<{opt.metavar}>", "help": opt.help})
        for opt in OPTIONS
    )

    _ids = {code: message_id(code, cls.severity) for code, cls in all_rules().items()}

    def open(self) -> None:
        """Validate the options once, before the first module (a bad value stops pylint)."""
        _settings(self.linter.config)

    def process_module(self, node) -> None:
        settings = _settings(self.linter.config)
        with node.stream() as stream:
            source = stream.read().decode(node.file_encoding or "utf-8", errors="replace")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tree = ast.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return  # pylint reports the syntax error itself
        for f in run(tree, settings, source):
            msgid = INTERNAL_ERROR_ID if f.code == "XLA000" else self._ids[f.code]
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
