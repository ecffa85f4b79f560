"""Message lengths over every fixture's findings (the text after the code, as an editor
shows it): ``python tests/message_lengths.py`` prints the count, median and max, and the
longest messages; ``tests/test_messages.py`` holds the limits (median <= 100, max <= 160)."""

from __future__ import annotations

import ast
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from flake8_xla import docgen, engine  # noqa: E402

FIXTURES = Path(__file__).resolve().parent / "fixtures"
MEDIAN_LIMIT = 100
MAX_LIMIT = 160


def fixture_messages(fixtures: Path = FIXTURES) -> list[tuple[str, int, str, str]]:
    """``(fixture name, line, code, message)`` of every finding on every fixture, run with
    the fixture's own ``# options:``."""
    out = []
    for path in sorted(fixtures.glob("XLA*.py")):
        source = path.read_text(encoding="utf-8")
        settings = docgen.settings_from_flags(docgen.source_flags(source))
        for f in engine.run(ast.parse(source), settings, source):
            out.append((path.name, f.line, f.code, f.message))
    return out


def length_stats(messages) -> dict:
    """count, median and max of the message lengths, and the longest message."""
    lengths = [len(m) for *_, m in messages]
    if not lengths:
        return {"count": 0, "median": 0, "max": 0, "longest": None}
    longest = max(messages, key=lambda rec: len(rec[-1]))
    return {"count": len(lengths), "median": statistics.median(lengths), "max": max(lengths), "longest": longest}


def main() -> int:
    messages = fixture_messages()
    stats = length_stats(messages)
    print(f"{stats['count']} findings over the fixtures: median {stats['median']} characters, max {stats['max']} "
          f"(limits: median <= {MEDIAN_LIMIT}, max <= {MAX_LIMIT})")
    over = sorted({(len(m), code, m) for _, _, code, m in messages if len(m) > MAX_LIMIT}, reverse=True)
    print(f"{len(over)} distinct messages over {MAX_LIMIT}:")
    for n, code, m in over[:20]:
        print(f"  {n:4d} {code} {m}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
