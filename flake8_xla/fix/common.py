"""What the rule fixes (``fix/rules.py``) and the porting fixes (``fix/porting.py``) share:
the registry they add to (``FIXES``, through :func:`fixes`), and edits both make.
``fix/registry.py`` imports both fix modules, so that every fix is registered.
"""

from __future__ import annotations

import libcst as cst

from .edits import arg_index, insert_arg, keyword_index, kwarg, positional_indices, quote_of, remove_arg, set_value, \
    string, string_value

#: code -> fix(builder, node) -> bool: True when it registered its edits
FIXES = {}


def fixes(*codes):
    """A decorator registering the fix for ``codes`` in :data:`FIXES`."""
    def register(fn):
        for code in codes:
            FIXES[code] = fn
        return fn
    return register


def safe_edit(fn):
    """An edit that leaves the node as it is when the updated node no longer has the shape
    it expects (another fix changed it)."""
    def wrapped(node):
        out = fn(node)
        return node if out is None else out
    return wrapped


def drop_statement(b, call) -> bool:
    """Drop the statement that is only ``call`` (an expression statement on its own line);
    False (no edit) when the call is part of a larger statement."""
    stmt = b.ctx.parent(call)
    line = b.ctx.parent(stmt)
    if not isinstance(stmt, cst.Expr) or not isinstance(line, cst.SimpleStatementLine):
        return False
    b.edit(stmt, lambda _: cst.RemovalSentinel.REMOVE, "drop")
    return True


def xla_init_method(b, node) -> bool:
    """``init_process_group(...)``: ``init_method="xla://"`` (``"pjrt://"`` before 2.1, with its
    import), ``rank=`` / ``world_size=`` dropped; False (no edit) when they are passed positionally
    or the init method is not a literal. The XLA104 fix, and part of XLA103's."""
    if not isinstance(node, cst.Call) or len(positional_indices(node)) > 2:
        return False  # world_size/rank given positionally: leave it to a human
    current = arg_index(node, "init_method", 1)
    if current is not None and string_value(node.args[current].value) is None:
        return False  # not a literal: what it holds is the user's
    method = "xla://" if b.ctx.settings.target_version >= (2, 1) else "pjrt://"
    if method == "pjrt://" and "torch_xla.experimental.pjrt_backend" not in b.ctx.imports.existing:
        b.needs.append(("torch_xla.experimental.pjrt_backend", "!import torch_xla.experimental.pjrt_backend"))
    literal = string(method, quote_of(node))

    def fn(c):
        for name in ("world_size", "rank"):  # the xla:// rendezvous takes both from the runtime
            i = keyword_index(c, name)
            if i is not None:
                c = remove_arg(c, i)
        i = arg_index(c, "init_method", 1)
        if i is not None:
            return set_value(c, i, literal)
        positional = positional_indices(c)
        backend = keyword_index(c, "backend")
        where = 1 if positional else backend + 1 if backend is not None else len(c.args)
        return insert_arg(c, where, kwarg("init_method", literal))
    b.edit(node, fn, "init method")
    return True
