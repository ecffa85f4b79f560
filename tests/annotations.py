"""Parse the annotations of the handed cases and of the rule fixtures.

Cases (``tests/cases``, ``../shared/cases``; format in their README):
``# variant NAME: FLAGS``, ``# expect: XLA101 XLA102``, ``# expect(NAME): XLA301``,
``# requires: 3.12``.

Fixtures (``tests/fixtures/XLA###.py``): ``# options: FLAGS`` and
``# error: XLA101@17`` (code, optionally ``@`` and the 1-based column flake8 prints).
"""

from __future__ import annotations

import dataclasses
import re
import shlex
from pathlib import Path

VARIANT_RE = re.compile(r"^#\s*variant\s+([\w-]+)\s*:(.*)$")
EXPECT_RE = re.compile(r"#\s*expect(?:\(([\w-]+)\))?\s*:\s*((?:XLA\d{3}[\s,]*)+)")
REQUIRES_RE = re.compile(r"^#\s*requires\s*:\s*(\d+)\.(\d+)")
ERROR_RE = re.compile(r"#\s*error\s*:\s*((?:XLA\d{3}(?:@\d+)?[\s,]*)+)")
OPTIONS_RE = re.compile(r"^#\s*options\s*:(.*)$")


@dataclasses.dataclass
class Case:
    path: Path
    variants: dict[str, list[str]]  # name -> flake8 flags
    expected: dict[str, set[tuple[int, str]]]  # variant -> {(line, code)}
    requires: tuple[int, int] | None


def parse_case(path: Path) -> Case:
    lines = path.read_text(encoding="utf-8").splitlines()
    variants: dict[str, list[str]] = {}
    requires = None
    for line in lines:
        m = VARIANT_RE.match(line.strip())
        if m:
            variants[m.group(1)] = shlex.split(m.group(2))
        m = REQUIRES_RE.match(line.strip())
        if m:
            requires = (int(m.group(1)), int(m.group(2)))
    if not variants:
        variants = {"default": []}
    expected = {name: set() for name in variants}
    for number, line in enumerate(lines, 1):
        for m in EXPECT_RE.finditer(line):
            codes = re.findall(r"XLA\d{3}", m.group(2))
            targets = [m.group(1)] if m.group(1) else list(variants)
            for name in targets:
                if name not in expected:
                    raise ValueError(f"{path}:{number}: expect for undeclared variant {name!r}")
                expected[name].update((number, code) for code in codes)
    return Case(path, variants, expected, requires)


def case_to_noqa(text: str) -> str:
    """Turn every ``# expect...: CODES`` comment into ``# noqa: CODES``."""
    out = []
    for line in text.splitlines():
        codes = []
        for m in EXPECT_RE.finditer(line):
            codes += re.findall(r"XLA\d{3}", m.group(2))
        if codes:
            line = EXPECT_RE.sub("", line).rstrip()
            line = f"{line}  # noqa: {','.join(dict.fromkeys(codes))}"
        out.append(line)
    return "\n".join(out) + "\n"


@dataclasses.dataclass
class Fixture:
    path: Path
    options: list[str]
    expected: set[tuple[int, int | None, str]]  # (line, 1-based col or None, code)


def parse_fixture(path: Path) -> Fixture:
    options: list[str] = []
    expected = set()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        m = OPTIONS_RE.match(line.strip())
        if m and number <= 5:
            options = shlex.split(m.group(1))
        m = ERROR_RE.search(line)
        if m:
            for code, col in re.findall(r"(XLA\d{3})(?:@(\d+))?", m.group(1)):
                expected.add((number, int(col) if col else None, code))
    return Fixture(path, options, expected)


def fixture_to_noqa(text: str) -> str:
    out = []
    for line in text.splitlines():
        m = ERROR_RE.search(line)
        if m:
            codes = re.findall(r"XLA\d{3}", m.group(1))
            line = line[: m.start()].rstrip() + f"  # noqa: {','.join(dict.fromkeys(codes))}"
        out.append(line)
    return "\n".join(out) + "\n"
