"""The CLI's output formats: ``default`` (flake8's ``path:line:col: CODE message``), ``json``,
``github`` (workflow annotations) and ``sarif`` (SARIF 2.1.0, for GitHub code scanning).

Columns in ``default``, ``json`` and ``github`` are flake8's (1-based, counted in UTF-8 bytes
from the line start); SARIF counts characters (``columnKind: unicodeCodePoints``).
A notebook's findings name their cell: ``nb.ipynb:cell 3:2:5:`` (``default``), ``"cell": 3``
with the line and column in that cell (``json``); ``github`` and ``sarif`` place them in the
file's JSON text, where GitHub shows them, and name the cell in the message.
"""

from __future__ import annotations

import inspect
import json
import os
import re
from pathlib import Path
from typing import TextIO
from urllib.parse import quote

from .. import __url__, __version__
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
    """The URL of a rule's page (``xla-docs-url``, by default this release's page); ``None``
    for a non-rule code."""
    return doc_url(code, settings) if code in all_rules() else None


def rule_page(code: str) -> str:
    """The rule's docs page (markdown), as ``docs/rules/XLA###.md`` has it."""
    from ..docgen import rule_page as page

    return page(all_rules()[code])


def where(r: Result) -> str:
    """``path:line:col`` of a finding; in a notebook ``path:cell N:line:col`` (the line and
    column in cell N, which counts every cell of the notebook from 1)."""
    cell = f"cell {r.cell}:" if r.cell is not None else ""
    return f"{r.path}:{cell}{r.line}:{r.col}"


def default(results: list[Result], out: TextIO, settings=None) -> None:
    for r in results:
        out.write(f"{where(r)}: {r.code} {r.message}\n")


def _json_item(r: Result, settings) -> dict:
    item = {
        "path": r.path, "line": r.line, "col": r.col, "end_line": r.end_line, "end_col": r.end_col,
        "code": r.code, "name": rule_name(r.code), "severity": level(r.code), "message": r.message,
        "url": rule_url(r.code, settings), "fix": applicability(r.code),
    }
    if r.cell is not None:  # a notebook: line and col are in this cell
        item["cell"] = r.cell
    return item


def to_json(results: list[Result], out: TextIO, settings=None) -> None:
    json.dump([_json_item(r, settings) for r in results], out, indent=2)
    out.write("\n")


def _github_escape(text: str, prop: bool = False) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if prop:
        text = text.replace(":", "%3A").replace(",", "%2C")
    return text


def github(results: list[Result], out: TextIO, settings=None) -> None:
    """Workflow commands. A notebook's finding is placed on the line and column of the
    ``.ipynb`` file's JSON text that holds it (what GitHub shows next to the annotation),
    and its text starts with ``cell N:line:col:``."""
    for r in results:
        kind = "error" if level(r.code) == "error" else "warning"
        line, col, text = r.line, r.col, f"{r.code} {r.message}"
        if r.cell is not None:
            line, col = r.raw or (1, 1)
            text = f"cell {r.cell}:{r.line}:{r.col}: {text}"
        out.write(f"::{kind} file={_github_escape(r.path, True)},line={line},col={col},"
                  f"title={r.code}::{_github_escape(text)}\n")


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
    if url is not None:
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
        text = f"{r.code} {r.message}"
        extra = {}
        if r.cell is not None:
            # a notebook: the region is in the file's JSON text (GitHub code scanning shows
            # an alert on the file's raw lines); the cell and the place in it go in the
            # message and in properties
            start = r.raw or (1, 1)
            region = {"startLine": start[0], "startColumn": start[1]}
            if r.raw and r.raw_end and r.raw_end >= r.raw:
                region.update(endLine=r.raw_end[0], endColumn=r.raw_end[1])
            text = f"cell {r.cell}:{r.line}:{r.char_col or 1}: {text}"
            extra["properties"] = {"cell": r.cell, "cellLine": r.line, "cellColumn": r.char_col or 1}
        location["region"] = region
        sarif_results.append({
            "ruleId": r.code, "ruleIndex": index[r.code], "level": level(r.code),
            "message": {"text": text},
            "locations": [{"physicalLocation": location}],
            **extra,
        })
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "flake8-xla", "version": __version__, "semanticVersion": __version__,
                "informationUri": __url__,
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
