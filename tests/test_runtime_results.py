"""The runtime results file (issue 21 §1) covers every rule, and every rule page carries its line.

``flake8_xla/data/runtime_results.json`` is written by the runtime set (``pytest -m runtime``,
tests/runtime/test_rule_evidence.py, with ``FLAKE8_XLA_WRITE_RUNTIME_RESULTS=1``), which also
checks it is current; this default-run test only checks its shape and coverage, so a new rule
without an entry fails here without torch_xla.
"""
import json
from pathlib import Path

import pytest

from flake8_xla import docgen
from flake8_xla.registry import all_rules

ROOT = Path(__file__).resolve().parent.parent
RULES = all_rules()
RESULTS = json.loads(docgen.RUNTIME_RESULTS_JSON.read_text(encoding="utf-8"))


def test_results_cover_exactly_the_rules():
    assert sorted(RESULTS) == sorted(RULES)
    assert docgen.RUNTIME_RESULTS_JSON.read_text(encoding="utf-8") == docgen.runtime_results_json(RESULTS)


@pytest.mark.parametrize("code", sorted(RULES))
def test_entry_is_one_sentence_seen_or_docs_only(code):
    entry = RESULTS.get(code, {})
    assert list(entry) in (["seen"], ["docs_only"]), f"{code}: {entry} (run the runtime set with " \
        "FLAKE8_XLA_WRITE_RUNTIME_RESULTS=1; a new rule needs a check or a DOCS_ONLY reason)"
    (text,) = entry.values()
    assert text.strip() == text and "\n" not in text and 20 <= len(text) <= 400 and text.endswith((".", '."'))


@pytest.mark.parametrize("code", sorted(RULES))
def test_rule_page_carries_the_runtime_line(code):
    page = (ROOT / "docs" / "rules" / f"{code}.md").read_text(encoding="utf-8")
    entry = RESULTS[code]
    line = (f"- Seen on torch_xla 2.9 (CPU): {entry['seen']}" if "seen" in entry
            else f"- Shown by the docs and source only: {entry['docs_only']}")
    assert line in page.splitlines()
