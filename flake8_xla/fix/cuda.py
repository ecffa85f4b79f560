"""Does a module without torch_xla look like CUDA training? (``--fix`` says so, instead of
"fixed 0 findings", when ``xla-scope = auto`` left such a file alone.)

Plain ``ast`` (no LibCST), one walk over the tree: linear in the module's size.
"""

from __future__ import annotations

import ast

SPAWN = "torch.multiprocessing.spawn"
NCCL = 'init_process_group("nccl")'
CUDA = ".cuda()"
#: the signs, in the order they are named
SIGNS = (SPAWN, NCCL, CUDA)


def _imports_torch_xla(tree: ast.AST) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "torch_xla" for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "torch_xla":
            return True
    return False


def _dotted(expr: ast.expr, aliases: dict[str, str]) -> str | None:
    """The dotted name of ``a.b.c`` with its first name resolved through the module's imports."""
    parts = []
    while isinstance(expr, ast.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    if not isinstance(expr, ast.Name):
        return None
    parts.append(aliases.get(expr.id, expr.id))
    return ".".join(reversed(parts))


def _is_nccl(node: ast.Call) -> bool:
    backend = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "backend"), None)
    return isinstance(backend, ast.Constant) and isinstance(backend.value, str) and backend.value.lower() == "nccl"


def cuda_signs(source: str) -> list[str]:
    """What makes ``source`` look like CUDA training, in the order of :data:`SIGNS`, each once:
    ``torch.multiprocessing.spawn`` (however imported), ``init_process_group("nccl")`` (first
    argument or ``backend=``), ``.cuda()``. Empty when the module imports torch_xla (the rules
    ran on it), shows none of them, or does not parse. Never raises."""
    if "spawn" not in source and "nccl" not in source and "cuda" not in source:
        return []  # the common case, without a parse
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    try:
        if _imports_torch_xla(tree):
            return []
        aliases: dict[str, str] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.asname:
                        aliases[a.asname] = a.name
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                for a in node.names:
                    aliases[a.asname or a.name] = f"{node.module}.{a.name}"
        found: set[str] = set()
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            name = _dotted(node.func, aliases)
            sign = None
            if name == SPAWN:
                sign = SPAWN
            elif name is not None and name.split(".")[-1] == "init_process_group" and _is_nccl(node):
                sign = NCCL
            elif isinstance(node.func, ast.Attribute) and node.func.attr == "cuda":
                sign = CUDA
            if sign is not None:
                found.add(sign)
        return [sign for sign in SIGNS if sign in found]
    except RecursionError:  # a tree too deep to walk: say nothing
        return []
