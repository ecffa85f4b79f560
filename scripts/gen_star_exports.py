"""Generate flake8_xla/data/torch_xla_star_exports.json from the pytorch/xla release tags.

``from M import *`` binds the names in ``M.__all__`` when M defines one. For each module
the version table tracks, this reads ``__all__`` (a literal list or tuple of strings) at
every release tag with ``git show`` and ``ast`` (nothing is imported or run) and writes,
per module: ``all``, ``{name: "X.Y-X.Z,..."}`` for the releases whose ``__all__`` lists it;
``defines_all``, the releases in which the module has an ``__all__``; and ``defined``, the
public names the module itself defines (not imports) in the releases without ``__all__``,
which is what a star import binds there that the user's code may mean.

Usage: python scripts/gen_star_exports.py GIT_DIR_OF_PYTORCH_XLA > flake8_xla/data/torch_xla_star_exports.json
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys

TAGS = {"2.0": "v2.0.0", "2.1": "v2.1.1", **{f"2.{m}": f"v2.{m}.0" for m in range(2, 10)}}
MODULES = {
    "torch_xla": ["torch_xla/__init__.py"],
    "torch_xla.amp": ["torch_xla/amp/__init__.py"],
    "torch_xla.core.xla_model": ["torch_xla/core/xla_model.py"],
    "torch_xla.distributed.parallel_loader": ["torch_xla/distributed/parallel_loader.py"],
    "torch_xla.distributed.spmd": ["torch_xla/distributed/spmd/__init__.py"],
    "torch_xla.distributed.xla_multiprocessing": ["torch_xla/distributed/xla_multiprocessing.py"],
    "torch_xla.experimental": ["torch_xla/experimental/__init__.py"],
    "torch_xla.runtime": ["torch_xla/runtime.py"],
}


def ranges(versions: list[str]) -> str:
    """``["2.2", "2.3", "2.5"]`` -> ``"2.2-2.3,2.5"``."""
    out, run = [], []
    for v in sorted(versions, key=lambda s: int(s.split(".")[1])):
        if run and int(v.split(".")[1]) != int(run[-1].split(".")[1]) + 1:
            out.append(run)
            run = []
        run.append(v)
    if run:
        out.append(run)
    return ",".join(r[0] if len(r) == 1 else f"{r[0]}-{r[-1]}" for r in out)


def dunder_all(source: str) -> list[str] | None:
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            if isinstance(node.value, (ast.List, ast.Tuple)):
                return [e.value for e in node.value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return None


def defined_names(source: str) -> list[str]:
    """Public names the module itself defines at module level (def, class, assignment, also
    inside module-level if/try/with); names bound by imports are left out: a star import
    re-binds them to the same objects (``torch``, ``os``), which the user's own imports name."""
    out, imported = [], set()
    todo = [(n, False) for n in ast.parse(source).body]
    while todo:
        node, in_try = todo.pop()
        if in_try and not isinstance(node, (ast.Import, ast.ImportFrom)):
            continue  # names set only inside try (probes such as `dist = distribution("tensorflow")`)
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            imported.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.append(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        out.append(n.id)
        elif isinstance(node, (ast.If, ast.Try, ast.With)):
            inner = in_try or isinstance(node, ast.Try)
            todo.extend((n, inner) for n in getattr(node, "body", []) + getattr(node, "orelse", [])
                        + getattr(node, "finalbody", []))
            for h in getattr(node, "handlers", []):
                todo.extend((n, inner) for n in h.body)
    return sorted({n for n in out if not n.startswith("_") and n not in imported})


def imported_names(source: str) -> set[str]:
    """Names bound by module-level imports (also inside if/try)."""
    out = set()
    todo = list(ast.parse(source).body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            out.update((a.asname or a.name).split(".")[0] for a in node.names if a.name != "*")
        elif isinstance(node, (ast.If, ast.Try)):
            todo.extend(node.body + node.orelse + getattr(node, "finalbody", []))
            for h in getattr(node, "handlers", []):
                todo.extend(h.body)
    return out


def star_reexports(source: str, path: str) -> list[str]:
    """Files a module star-imports from inside torch_xla (``from .torch_xla import *`` in
    ``torch_xla/__init__.py`` from 2.5 on), as repository paths."""
    package = path.rsplit("/", 1)[0]
    out = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
            if node.level == 1 and node.module:
                base = f"{package}/{node.module.replace('.', '/')}"
            elif not node.level and (node.module or "").startswith("torch_xla."):
                base = node.module.replace(".", "/")
            else:
                continue
            out += [f"{base}.py", f"{base}/__init__.py"]
    return out


def main(git_dir: str) -> None:
    result = {}
    for module, paths in MODULES.items():
        names: dict[str, list[str]] = {}
        defined: list[str] = []
        own: dict[str, list[str]] = {}
        for version, tag in TAGS.items():
            for path in paths:
                proc = subprocess.run(["git", f"--git-dir={git_dir}", "show", f"{tag}:{path}"],
                                      capture_output=True, text=True)
                if proc.returncode == 0:
                    found = dunder_all(proc.stdout)
                    if found is not None:
                        defined.append(version)
                        for name in dict.fromkeys(found):  # a name listed twice counts once
                            names.setdefault(name, []).append(version)
                    else:
                        names_here = set(defined_names(proc.stdout))
                        for target in star_reexports(proc.stdout, path):  # from .torch_xla import *
                            sub = subprocess.run(["git", f"--git-dir={git_dir}", "show", f"{tag}:{target}"],
                                                 capture_output=True, text=True)
                            if sub.returncode == 0:
                                names_here |= set(dunder_all(sub.stdout) or defined_names(sub.stdout))
                                # a name the re-exported module imports (torch_xla.dist is
                                # torch.distributed from 2.4) is that module, not torch_xla's
                                names_here -= imported_names(sub.stdout)
                        for name in sorted(names_here):
                            own.setdefault(name, []).append(version)
                    break
        result[module] = {"all": {n: ranges(v) for n, v in sorted(names.items())},
                          "defines_all": ranges(defined) if defined else None,
                          "defined": {n: ranges(v) for n, v in sorted(own.items())}}
    json.dump({"source": "__all__ of each module at the pytorch/xla release tags (2.1 = v2.1.1), read with "
                         "git show and ast by scripts/gen_star_exports.py; facts about the API, no torch_xla code.",
               "modules": result}, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv[1])
