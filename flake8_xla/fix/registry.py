"""Every fix, registered: ``FIXES[code](builder, node) -> bool`` (see ``fix/rules.py``).

The two fix modules add to :data:`flake8_xla.fix.common.FIXES` when imported; they share
``fix/common.py`` and ``fix/edits.py`` and never import each other. Their codes are
disjoint, so the order below is only the order of ``FIXES``.
"""

from __future__ import annotations

from . import rules  # noqa: F401  (registers the rule fixes)
from . import porting  # noqa: F401  (registers the porting fixes)
from .common import FIXES

__all__ = ["FIXES"]
