"""Message lengths: one short line an editor does not cut (median <= 100 characters after the
code, none over 160), measured over every fixture's findings by ``message_lengths.py``."""

from __future__ import annotations

from message_lengths import MAX_LIMIT, MEDIAN_LIMIT, fixture_messages, length_stats


def test_length_stats_helper():
    stats = length_stats([("a.py", 1, "XLA101", "x" * 10), ("a.py", 2, "XLA102", "y" * 30),
                          ("b.py", 1, "XLA101", "z" * 20)])
    assert (stats["count"], stats["median"], stats["max"]) == (3, 20, 30)
    assert stats["longest"][2] == "XLA102"
    assert length_stats([])["count"] == 0


def test_every_fixture_is_measured():
    messages = fixture_messages()
    assert messages and {code for _, _, code, _ in messages} >= {"XLA001", "XLA101"}


def test_messages_are_short():
    stats = length_stats(fixture_messages())
    assert stats["median"] <= MEDIAN_LIMIT, stats
    assert stats["max"] <= MAX_LIMIT, stats
