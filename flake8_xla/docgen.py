"""Generate the rule docs from the rule classes: ``python -m flake8_xla.docgen [--check] [DIR]``.

Writes ``DIR/rules/XLA###.md`` (one page per rule: summary, where it is reported, the
docstring sections, the messages it really reports, examples) and ``DIR/index.md`` (the
rule table). ``DIR`` defaults to ``docs``. With ``--check`` nothing is written; exit 1
lists the pages that differ.

Each page also carries what torch_xla 2.9 (CPU) reported for the rule ("Seen on ...") or why
one CPU replica cannot show it ("Shown by the docs and source only: ..."), read from
``flake8_xla/data/runtime_results.json``, which the runtime tests (``pytest -m runtime``)
write with ``FLAKE8_XLA_WRITE_RUNTIME_RESULTS=1`` and check is current.

The messages on each page are generated, not written: the rule runs over its own ``bad``
examples and, from a clone, over the fixtures ``tests/fixtures/XLA*.py``; messages that
differ only in the code they quote (names, numbers, expressions) count once, shown by the
first one seen. The list is kept in ``flake8_xla/data/messages.json`` (written with the
repository's own ``docs``), so an installed package renders the same pages.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import functools
import inspect
import json
import re
import shlex
import sys
from pathlib import Path

from . import settings as settings_mod
from .fix import fix_doc
from .registry import ANYWHERE, ENV, NOT_RULES, UNIMPORTED, all_rules

FAMILIES = {
    "0": "launch", "1": "torch.distributed and DDP", "2": "gradient reduction and the optimizer step",
    "3": "data loading and step sync", "4": "devices", "5": "host syncs and recompilation",
    "6": "checkpoints and ranks", "7": "mixed precision", "8": "deprecated, removed and nonexistent APIs",
    "9": "runtime odds and ends",
}
PACKAGE = Path(__file__).resolve().parent
REPO_DOCS = PACKAGE.parent / "docs"
FIXTURES = PACKAGE.parent / "tests" / "fixtures"
MESSAGES_JSON = PACKAGE / "data" / "messages.json"
#: what torch_xla 2.9 (CPU) reported for each rule, written by the runtime set (tests/runtime)
RUNTIME_RESULTS_JSON = PACKAGE / "data" / "runtime_results.json"
_OPTIONS_RE = re.compile(r"^#\s*options\s*:(.*)$", re.M)


def settings_from_flags(flags: list[str]) -> settings_mod.Settings:
    """The settings a fixture's or example's ``# options:`` line asks for (flake8 flags)."""
    values: dict[str, str] = {}
    for flag in flags:
        key, _, value = flag.partition("=")
        if key not in ("--xla-scope", "--xla-version", "--xla-reducing-calls", "--xla-launchers", "--xla-project"):
            raise ValueError(f"unsupported option {flag}")
        values[key] = value
    settings = settings_mod.build(values.get("--xla-scope"), values.get("--xla-version"))
    return dataclasses.replace(
        settings,
        reducing_calls=settings_mod.parse_names(values.get("--xla-reducing-calls"), "--xla-reducing-calls"),
        launchers=settings_mod.parse_names(values.get("--xla-launchers"), "--xla-launchers"),
        project=settings_mod.parse_project(values.get("--xla-project", settings.project)))


def source_flags(source: str) -> list[str]:
    """The flags of a ``# options: FLAGS`` line in the first lines of ``source``."""
    m = _OPTIONS_RE.search("\n".join(source.splitlines()[:5]))
    return shlex.split(m.group(1)) if m else []


#: a token that quotes code: it holds one of . _ = ( ) [ ] quotes digits < > / + * % -
_CODE_TOKEN = re.compile(r"""[^\s;,:]*[._=()\[\]'"0-9<>/+*%{}-][^\s;,:]*""")


def skeleton(message: str) -> str:
    """``message`` with the code it quotes blanked: ``xmp.spawn() given nprocs=8: ...`` and
    ``... nprocs=flags.cores: ...`` have one skeleton, so a page lists each wording once."""
    return re.sub(r"…(?:[\s,]*…)+", "…", _CODE_TOKEN.sub("…", message))


def _findings(source: str):
    from .engine import run

    return run(ast.parse(source), settings_from_flags(source_flags(source)), source)


def collect_variants(rules=None, fixtures: Path | None = FIXTURES) -> dict[str, list[str]]:
    """Code -> the distinct wordings (by :func:`skeleton`) its rule reports, each shown by its
    first message: over the rule's ``bad`` examples first, then over every fixture."""
    rules = rules or all_rules()
    found: dict[str, dict[str, str]] = {code: {} for code in rules}
    for code, cls in sorted(rules.items()):
        for src in cls.bad:
            for f in _findings(src):
                if f.code == code:
                    found[code].setdefault(skeleton(f.message), f.message)
    if fixtures is not None and fixtures.is_dir():
        for path in sorted(fixtures.glob("XLA*.py")):
            for f in _findings(path.read_text(encoding="utf-8")):
                if f.code in found:
                    found[f.code].setdefault(skeleton(f.message), f.message)
    return {code: list(v.values()) for code, v in sorted(found.items())}


@functools.lru_cache(maxsize=1)
def _stored_variants() -> dict[str, list[str]]:
    try:
        return json.loads(MESSAGES_JSON.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def runtime_results_json(results: dict[str, dict[str, str]]) -> str:
    """The text of :data:`RUNTIME_RESULTS_JSON` for ``results``: code -> ``{"seen": sentence}``
    (what the runtime reported) or ``{"docs_only": why}`` (one CPU replica cannot show it)."""
    return json.dumps(dict(sorted(results.items())), indent=1, ensure_ascii=False) + "\n"


@functools.lru_cache(maxsize=1)
def runtime_results() -> dict[str, dict[str, str]]:
    """The stored runtime results (code -> entry); empty when the file is missing or unreadable."""
    try:
        return json.loads(RUNTIME_RESULTS_JSON.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def runtime_line(code: str) -> str | None:
    """The rule page's runtime bullet for ``code``, or None when the results file has no entry."""
    entry = runtime_results().get(code, {})
    if "seen" in entry:
        return f"- Seen on torch_xla 2.9 (CPU): {entry['seen']}"
    if "docs_only" in entry:
        return f"- Shown by the docs and source only: {entry['docs_only']}"
    return None


def message_variants(cls) -> list[str]:
    """The messages of one rule as the docs list them: the stored list, or for a rule not
    yet in it, what its ``bad`` examples report."""
    stored = _stored_variants().get(cls.code)
    if stored is not None:
        return stored
    return collect_variants({cls.code: cls}, fixtures=None)[cls.code]


def example_location(cls) -> tuple[int, str] | None:
    """(line, the first line of the reported node's source) of the rule's first finding on
    its first ``bad`` example that has one."""
    for src in cls.bad:
        for f in _findings(src):
            if f.code == cls.code:
                line = src.splitlines()[f.line - 1]
                end = f.end[1] if f.end and f.end[0] == f.line else len(line)
                text = line[f.col:end].rstrip()
                if f.end and f.end[0] != f.line:
                    text += " ..."
                return f.line, text if len(text) <= 70 else text[:66] + " ..."
    return None


def rule_page(cls, variants: list[str] | None = None) -> str:
    doc = inspect.cleandoc(cls.__doc__ or "")
    scope = ("anywhere a torch_xla name resolves (no scope needed)" if cls.scope == ANYWHERE
             else "wherever the variable is set, whatever the module imports (not in XLA-off branches)"
             if cls.scope == ENV else "modules that never import torch_xla (whatever `--xla-scope` says)"
             if cls.scope == UNIMPORTED else "XLA code (modules that import torch_xla, or `--xla-scope=always`)")
    variants = message_variants(cls) if variants is None else variants
    where = cls.reported_at or "the start of the flagged expression"
    located = example_location(cls)
    if located is not None:
        where += f" (first example below: line {located[0]}, `{located[1]}`)"
    lines = [
        f"# {cls.code} `{cls.name}`",
        "",
        f"- Summary: {cls.message}; {cls.fix}",
        f"- Applies to: {scope}",
        f"- torch_xla versions: {cls.versions}",
        f"- Family: XLA{cls.code[3]} ({FAMILIES[cls.code[3]]})",
    ]
    if cls.hint:
        lines.append("- Level: **hint**, off in a plain `flake8` run; on with `--select=XLA` or "
                     "`--extend-select=XLA` (see [the index](../index.md#hints))")
    lines += [
        f"- Reported at: {where}. flake8 matches `# noqa: {cls.code}` against the line where "
        "that node starts (for a node spanning lines, its first line)",
        f"- {fix_doc(cls.code)}",
        *filter(None, [runtime_line(cls.code)]),
        "",
        doc,
        "",
        "## Messages",
        "",
        "What the rule reports, one line per wording (generated by running the rule over its "
        "examples and test fixtures):",
        "",
        "```text",
        *(f"{cls.code} {m}" for m in variants),
        "```",
        "",
        "## Examples that must fire",
    ]
    for src in cls.bad:
        lines += ["```python", src.rstrip("\n"), "```"]
    lines += ["", "## Examples that must stay silent"]
    for src in cls.good:
        lines += ["```python", src.rstrip("\n"), "```"]
    return "\n".join(lines) + "\n"


def index_page(rules) -> str:
    hints = [code for code, cls in sorted(rules.items()) if cls.hint]
    lines = [
        "# flake8-xla rules",
        "",
        "Codes are `XLA` + 3 digits; the first digit is the family, so `--select=XLA1` picks one family.",
        "Generated by `python -m flake8_xla.docgen`; see [usage](usage.md) for every way to run the rules.",
        "",
        "## Codes that are not rules",
        "",
        *(f"- `{code}` `{name}`: {text}." for code, (name, text) in sorted(NOT_RULES.items())),
        "",
        "Each finding is reported on the line where the node its page names starts (for a call",
        "spanning lines, its first line): that is the line `# noqa: XLA###` goes on. Each page",
        "lists the messages the rule really reports, generated from its examples and fixtures.",
        "",
        "## Hints",
        "",
        "Rules marked *hint* (" + (", ".join(hints) if hints else "none yet") + ") give advice worth a look "
        "rather than report a defect. Like flake8-bugbear's B9 rules they are in flake8's",
        "default-ignore list: a plain `flake8` run leaves them out, and selecting XLA explicitly",
        "(`--select=XLA`, `--extend-select=XLA`, `--select=XLA3`) turns them on. `extend-ignore =",
        "XLA304` then silences one (the longer prefix wins). Setting flake8's `ignore =` replaces",
        "the default-ignore list, and the hints come back on, as flake8's own defaults do. pylint",
        "leaves them disabled until enabled (`--enable=xla` or the message's name); the standalone",
        "CLI follows flake8's rule.",
        "",
        "| code | name | message | fix | torch_xla |",
        "|---|---|---|---|---|",
    ]
    for code, cls in sorted(rules.items()):
        name = f"`{cls.name}` (hint)" if cls.hint else f"`{cls.name}`"
        lines.append(f"| [{code}](rules/{code}.md) | {name} | {cls.message} | {cls.fix} | {cls.versions} |")
    return "\n".join(lines) + "\n"


def pages(rules=None, variants: dict[str, list[str]] | None = None) -> dict[str, str]:
    """Relative path -> content of every generated page (messages collected afresh)."""
    rules = rules or all_rules()
    variants = collect_variants(rules) if variants is None else variants
    out = {f"rules/{code}.md": rule_page(cls, variants.get(code, [])) for code, cls in sorted(rules.items())}
    out["index.md"] = index_page(rules)
    return out


def messages_json(variants: dict[str, list[str]]) -> str:
    return json.dumps(variants, indent=1, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m flake8_xla.docgen", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when the docs differ")
    parser.add_argument("dir", nargs="?", default="docs", type=Path)
    args = parser.parse_args(argv)
    variants = collect_variants()
    targets = {args.dir / rel: content for rel, content in pages(variants=variants).items()}
    if FIXTURES.is_dir():  # the stored messages, from a clone (a wheel has no fixtures)
        targets[MESSAGES_JSON] = messages_json(variants)
    stale = []
    for path, content in targets.items():
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if current == content:
            continue
        stale.append(str(path))
        if not args.check:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content, encoding="utf-8")
    _stored_variants.cache_clear()
    if args.check and stale:
        print("docs differ from the rule classes (run python -m flake8_xla.docgen):", *stale, sep="\n  ")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
