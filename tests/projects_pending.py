"""Marks of ``../shared/projects`` known not to hold yet: (project, file, variant, line, code) -> why.

A ratchet read by tests/test_projects.py: when a change makes a mark hold, that test fails until
its row is removed here. False positives are never listed: they are fixed.
"""

PENDING: dict[tuple[str, str, str, int, str], str] = {
}
