"""The CLI's output formats: ``default`` (flake8's ``path:line:col: CODE message``), ``json``,
``github`` (workflow annotations) and ``sarif`` (SARIF 2.1.0, for GitHub code scanning).

Columns in ``default``, ``json`` and ``github`` are flake8's (1-based, counted in UTF-8 bytes
from the line start); SARIF counts characters (``columnKind: unicodeCodePoints``).
"""

from __future__ import annotations

import inspect
import json
import os
import re
from pathlib import Path
from typing import TextIO
from urllib.parse import quote

from .. import __version__
from ..fix import applicability
from ..registry import all_rules, doc_url
from .files import Result

FORMATS = ("default", "json", "github", "sarif")
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"

#: codes that are not rules: what they are called, and their one-line help
NON_RULES = {
    "E902": ("io-error", "The file could not be read or tokenized; nothing in it was linted."),
    "E999": ("syntax-error", "The file does not parse; nothing in it was linted (flake8's E999)."),
    "XLA000": ("internal-error", "A flake8-xla rule failed on this file; the other rules still ran. "
               "Please report it."),
}


def level(code: str) -> str:
    """The finding's level, as SARIF names it: ``error`` (a crash, hang or wrong result, and a
    file that was not linted), ``warning`` (performance, porting, deprecation) or ``note``
    (a hint)."""
    cls = all_rules().get(code)
    if cls is None:
        return "error"
    if getattr(cls, "hint", False):
        return "note"
    return "error" if cls.severity == "E" else "warning"


def rule_name(code: str) -> str:
    cls = all_rules().get(code)
    return cls.name if cls is not None else NON_RULES.get(code, (code.lower(), ""))[0]


def rule_url(code: str, settings=None) -> str | None:
    """The URL of a rule's page from ``xla-docs-url``; ``None`` for a non-rule code or when
    no URL template is configured."""
    return doc_url(code, settings) if code in all_rules() else None


def rule_page(code: str) -> str:
    """The rule's docs page (markdown), as ``docs/rules/XLA###.md`` has it."""
    from ..docgen import rule_page as page

    return page(all_rules()[code])


def default(results: list[Result], out: TextIO, settings=None) -> None:
    for r in results:
        out.write(f"{r.path}:{r.line}:{r.col}: {r.code} {r.message}\n")


def to_json(results: list[Result], out: TextIO, settings=None) -> None:
    json.dump([{
        "path": r.path, "line": r.line, "col": r.col, "end_line": r.end_line, "end_col": r.end_col,
        "code": r.code, "name": rule_name(r.code), "severity": level(r.code), "message": r.message,
        "url": rule_url(r.code, settings), "fix": applicability(r.code),
    } for r in results], out, indent=2)
    out.write("\n")


def _github_escape(text: str, prop: bool = False) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if prop:
        text = text.replace(":", "%3A").replace(",", "%2C")
    return text


def github(results: list[Result], out: TextIO, settings=None) -> None:
    for r in results:
        kind = "error" if level(r.code) == "error" else "warning"
        out.write(f"::{kind} file={_github_escape(r.path, True)},line={r.line},col={r.col},"
                  f"title={r.code}::{_github_escape(f'{r.code} {r.message}')}\n")


def _plain(markdown: str) -> str:
    """The page as plain text: code fences and inline backticks dropped."""
    return re.sub(r"`([^`]*)`", r"\1", re.sub(r"^```\w*\n?", "", markdown, flags=re.M)).strip()


def _descriptor(code: str, settings) -> dict:
    cls = all_rules().get(code)
    if cls is None:
        name, text = NON_RULES[code]
        return {"id": code, "name": name, "shortDescription": {"text": text}, "fullDescription": {"text": text},
                "help": {"text": text}, "defaultConfiguration": {"level": "error"},
                "properties": {"tags": ["flake8-xla"]}}
    doc = inspect.cleandoc(cls.__doc__ or "")
    what = doc.split("## Why is this bad?")[0].replace("## What it does", "").strip() or cls.message
    page = rule_page(code)
    descriptor = {
        "id": code,
        "name": cls.name,
        "shortDescription": {"text": f"{cls.message}; {cls.fix}"},
        "fullDescription": {"text": _plain(what)},
        "help": {"text": _plain(page), "markdown": page},
        "defaultConfiguration": {"level": level(code)},
        "properties": {"tags": ["flake8-xla", f"XLA{code[3]}"], "torch_xla-versions": cls.versions},
    }
    url = doc_url(code, settings)
    if url is not None:  # only where the user configured xla-docs-url: no made-up link
        descriptor["helpUri"] = url
    if getattr(cls, "hint", False):
        descriptor["properties"]["tags"].append("hint")
    return descriptor


def _uri(path: str) -> tuple[str, bool]:
    """(URI, relative to the current folder?) of a reported path."""
    absolute = os.path.abspath(path)
    rel = os.path.relpath(absolute)
    if rel.startswith(os.pardir):
        return Path(absolute).as_uri(), False
    return quote(Path(rel).as_posix()), True


def sarif_log(results: list[Result], settings=None) -> dict:
    codes = sorted(all_rules()) + sorted(NON_RULES)
    index = {code: i for i, code in enumerate(codes)}
    sarif_results = []
    for r in results:
        uri, relative = _uri(r.path) if r.path != "stdin" else (quote(r.path), True)
        location = {"artifactLocation": {"uri": uri, **({"uriBaseId": "%SRCROOT%"} if relative else {})}}
        region = {"startLine": r.line, "startColumn": r.char_col or 1}
        if r.end_line is not None and r.char_end_col is not None:
            region.update(endLine=r.end_line, endColumn=r.char_end_col)
        location["region"] = region
        sarif_results.append({
            "ruleId": r.code, "ruleIndex": index[r.code], "level": level(r.code),
            "message": {"text": f"{r.code} {r.message}"},
            "locations": [{"physicalLocation": location}],
        })
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "flake8-xla", "version": __version__, "semanticVersion": __version__,
                "rules": [_descriptor(code, settings) for code in codes],
            }},
            "originalUriBaseIds": {"%SRCROOT%": {"uri": Path(os.getcwd()).as_uri().rstrip("/") + "/"}},
            "columnKind": "unicodeCodePoints",
            "results": sarif_results,
        }],
    }


def sarif(results: list[Result], out: TextIO, settings=None) -> None:
    json.dump(sarif_log(results, settings), out, indent=2)
    out.write("\n")


WRITERS = {"default": default, "json": to_json, "github": github, "sarif": sarif}
