"""Lines as Python's tokenizer sees them.

``str.splitlines`` also breaks on form feed, ``\\x0b``, ``\\x1c``-``\\x1e``, ``\\x85`` and
U+2028/U+2029, which Python treats as ordinary characters (inside comments and strings) or
whitespace: after one of them, line numbers would no longer match ``ast``'s and flake8's.
"""

from __future__ import annotations

import io


def split_lines(text: str) -> list[str]:
    """``text``'s lines with their ends kept, split only at ``\\r\\n``, ``\\r`` and ``\\n``
    (as the tokenizer does); ``"".join`` of the result is ``text``. Never raises."""
    return io.StringIO(text, newline="").readlines()


def universal_lines(text: str) -> list[str]:
    """``text``'s lines as flake8 reads a file (universal newlines): split as
    :func:`split_lines` does, each ``\\r\\n`` or ``\\r`` line end turned into ``\\n`` (flake8's
    ``# noqa`` pattern does not see past a lone ``\\r``). Never raises."""
    return io.StringIO(text, newline=None).readlines()
