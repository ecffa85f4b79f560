"""Each layer of the package only looks down: the per-module model imports none of the
rules, the fixer or the project layer; the project layer imports no rule; no rule file
imports another rule file's private (``_x``) name; the fixer's rule fixes and porting fixes
do not import each other (both register through ``fix/registry.py``).

Every module of ``flake8_xla`` is parsed with ``ast`` (never imported), and every import is
read, also those inside functions (a lazy import is still a dependency)."""

from __future__ import annotations

import ast
import pathlib

import flake8_xla

PACKAGE = pathlib.Path(flake8_xla.__file__).parent


def _module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: pathlib.Path) -> list[tuple[int, str, str | None]]:
    """``(line, module, name)`` of every import in ``path``: ``import a.b`` gives ``("a.b",
    None)``; ``from .x import y`` gives the absolute ``x`` and ``y``, and also ``("x.y",
    None)`` (``from .. import rules`` imports the submodule)."""
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if type(node) is ast.Import:
            out.extend((node.lineno, alias.name, None) for alias in node.names)
        elif type(node) is ast.ImportFrom:
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                out.append((node.lineno, target, alias.name))
                out.append((node.lineno, f"{target}.{alias.name}", None))
    return out


def _package_imports() -> dict[str, list[tuple[int, str, str | None]]]:
    return {_module_name(p): _imports(p) for p in sorted(PACKAGE.rglob("*.py"))}


def _in(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


IMPORTS = _package_imports()


def test_the_walk_sees_the_package():
    """The walk finds the layers and resolves relative imports (so the checks below look at
    real import lists): ``flake8_xla.model`` imports its mixin ``flake8_xla.model.training``."""
    assert {"flake8_xla.model", "flake8_xla.rules.step", "flake8_xla.fix.porting",
            "flake8_xla.project.summary"} <= set(IMPORTS)
    assert any(m == "flake8_xla.model.training" and name == "Training" for _, m, name in IMPORTS["flake8_xla.model"])
    assert any(m == "flake8_xla.model" and name == "Model" for _, m, name in IMPORTS["flake8_xla.rules._common"])


def test_model_imports_no_upper_layer():
    """The model is the bottom layer: rules, fixes and project mode ask it; it asks none of them."""
    upper = ("flake8_xla.rules", "flake8_xla.fix", "flake8_xla.project", "flake8_xla.engine", "flake8_xla.registry")
    crossings = {(mod, line, target) for mod, imports in IMPORTS.items() if _in(mod, "flake8_xla.model")
                 for line, target, _ in imports if any(_in(target, u) for u in upper)}
    assert crossings == set()


def test_project_imports_no_rule():
    """Project summaries are built from the model's facts, never from a rule's helpers."""
    crossings = {(mod, line, target) for mod, imports in IMPORTS.items() if _in(mod, "flake8_xla.project")
                 for line, target, _ in imports if _in(target, "flake8_xla.rules")}
    assert crossings == set()


def test_no_rule_file_imports_another_ones_private_names():
    """What several rule files share is public, in ``rules/_common.py`` or the model."""
    crossings = {(mod, line, f"{target}.{name}") for mod, imports in IMPORTS.items() if _in(mod, "flake8_xla.rules")
                 for line, target, name in imports
                 if name is not None and name.startswith("_") and _in(target, "flake8_xla.rules") and target != mod}
    assert crossings == set()


def test_rule_fixes_and_porting_fixes_do_not_import_each_other():
    """``fix/rules.py`` and ``fix/porting.py`` share ``fix/common.py`` and ``fix/edits.py``;
    ``fix/registry.py`` imports both, in order, to register their fixes."""
    pairs = {("flake8_xla.fix.rules", "flake8_xla.fix.porting"), ("flake8_xla.fix.porting", "flake8_xla.fix.rules")}
    crossings = {(mod, line, target) for mod, other in sorted(pairs) for line, target, _ in IMPORTS[mod]
                 if _in(target, other)}
    assert crossings == set()
