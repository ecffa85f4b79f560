"""Generate ``flake8_xla/data/torch_xla_env_vars.json``: the environment variables each
torch_xla release reads.

Usage::

    python scripts/gen_env_table.py /path/to/pytorch-xla.git [-o flake8_xla/data/torch_xla_env_vars.json]

The argument is a git directory (a bare mirror is enough) of https://github.com/pytorch/xla
with its release tags. Nothing is checked out and no torch_xla code is copied: files are
read with ``git show TAG:PATH`` and only variable names go into the table.

Releases and tags (as in the other tables): 2.0 = ``v2.0.0``, 2.1 = ``v2.1.1`` (the
``v2.1.0`` tag points at a pre-release master commit), 2.2 ... 2.9 = ``vX.Y.0``.

What counts as "read" (names of every prefix are kept; XLA813 filters by prefix itself):

C++ (``torch_xla/csrc/**``, and ``third_party/xla_client/**`` where the 2.0 runtime lived)
  - the first argument of ``GetEnvString`` / ``GetEnvInt`` / ``GetEnvBool`` /
    ``GetEnvDouble`` / ``GetEnvOrdinalPath`` (``runtime::sys_util``, ``xla::sys_util``)
    and of ``getenv`` / ``std::getenv``, as a string literal or as a constant
    (``env::kEnvPjRtDevice``) resolved through every ``kName = "..."`` definition of the
    release's C++ sources;
  - every constant defined in ``runtime/env_vars.cc`` (``.cpp`` from 2.8;
    ``xla_client/env_vars.cc`` in 2.0): these constants exist to be read;
  - string literals in the brace lists of ``*_vars`` vectors (``env_hash.cpp``: the
    variables hashed into the compilation cache key).

Python (``torch_xla/**/*.py``, parsed with ``ast``)
  - the first argument of ``os.environ.get`` / ``os.getenv`` / ``os.environ.setdefault`` /
    ``os.environ.pop`` / ``xu.getenv_as`` / ``check_env_flag`` / ``_set_missing_env``,
    ``os.environ[...]`` reads, ``... in os.environ``;
  - a key that is a name or attribute is resolved through string constants bound in the
    same file, the constants of ``torch_xla/core/xla_env_vars.py`` (``xenv.PJRT_DEVICE``)
    and the literal lists a ``for name in (...)`` loop iterates
    (``_check_deprecated_env_var``);
  - every constant of ``torch_xla/core/xla_env_vars.py``.

The output maps each name to the releases that read it, as ranges (``"2.0-2.4,2.6-2.9"``),
the format of ``torch_xla_names.json``.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import subprocess
import sys
from pathlib import Path

TAGS = {"2.0": "v2.0.0", "2.1": "v2.1.1", **{f"2.{m}": f"v2.{m}.0" for m in range(2, 10)}}
VERSIONS = list(TAGS)
NAME = r"[A-Z][A-Z0-9_]*[A-Z0-9]"
ENV_NAME_RE = re.compile(rf"^{NAME}$")
CPP_CALL_RE = re.compile(r"\b(?:GetEnv(?:String|Int|Bool|Double|OrdinalPath)|getenv)\s*\(\s*([^,()]+?)\s*[,)]")
CPP_CONST_RE = re.compile(r"\b(k\w+)\s*(?:\[\s*\])?\s*(?:=\s*|\(\s*)\"(" + NAME + r")\"", re.S)
CPP_VARS_LIST_RE = re.compile(r"\w*_vars\s*=\s*\{([^}]*)\}", re.S)
CPP_LITERAL_RE = re.compile(r"\"(" + NAME + r")\"")
CPP_SUFFIXES = (".cc", ".cpp", ".h", ".hpp")
PY_READERS = {"get", "getenv", "setdefault", "pop", "getenv_as", "check_env_flag", "_set_missing_env"}


def git(gitdir: str, *args: str) -> str:
    return subprocess.run(["git", f"--git-dir={gitdir}", *args], check=True, capture_output=True,
                          text=True, errors="replace").stdout


def files(gitdir: str, tag: str) -> list[str]:
    return [p for p in git(gitdir, "ls-tree", "-r", "--name-only", tag).splitlines()
            if p.startswith(("torch_xla/", "third_party/xla_client/"))
            and "/test" not in p and not re.match(r"test_|.*_test\.", p.rsplit("/", 1)[-1])]


def cpp_names(sources: dict[str, str]) -> set[str]:
    consts: dict[str, set[str]] = {}
    for text in sources.values():
        for ident, value in CPP_CONST_RE.findall(text):
            consts.setdefault(ident, set()).add(value)
    out: set[str] = set()
    for path, text in sources.items():
        if re.search(r"(^|/)env_vars\.(cc|cpp)$", path):
            out.update(value for _, value in CPP_CONST_RE.findall(text))
        for arg in CPP_CALL_RE.findall(text):
            arg = arg.strip()
            if arg.startswith('"'):
                literal = arg.strip('"')
                if ENV_NAME_RE.match(literal):
                    out.add(literal)
            else:
                out.update(consts.get(arg.rsplit("::", 1)[-1], ()))
        for body in CPP_VARS_LIST_RE.findall(text):
            out.update(CPP_LITERAL_RE.findall(body))
    return out


def _is_environ(node: ast.AST) -> bool:
    return (type(node) is ast.Attribute and node.attr == "environ") or (type(node) is ast.Name and node.id == "environ")


def _strings(node: ast.AST | None) -> list[str]:
    if type(node) is ast.Constant and isinstance(node.value, str):
        return [node.value]
    if type(node) in (ast.List, ast.Tuple, ast.Set):
        return [s for e in node.elts for s in _strings(e)]
    return []


def py_names(source: str, env_consts: dict[str, str]) -> set[str]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    bound: dict[str, set[str]] = {}  # a name -> the string literals bound to it in this file
    for node in ast.walk(tree):
        if type(node) is ast.Assign:
            for target in node.targets:
                if type(target) is ast.Name:
                    bound.setdefault(target.id, set()).update(_strings(node.value))
        elif type(node) in (ast.For, ast.comprehension) and type(node.target) is ast.Name:
            values = _strings(node.iter)
            if type(node.iter) is ast.Name:
                values = list(bound.get(node.iter.id, ()))
            bound.setdefault(node.target.id, set()).update(values)

    def keys(node: ast.AST) -> set[str]:
        if type(node) is ast.Constant and isinstance(node.value, str):
            return {node.value}
        if type(node) is ast.Name:
            return set(bound.get(node.id, ()))
        if type(node) is ast.Attribute and node.attr in env_consts:  # xenv.PJRT_DEVICE
            return {env_consts[node.attr]}
        return set()

    out: set[str] = set()
    for node in ast.walk(tree):
        if type(node) is ast.Call and node.args:
            func = node.func
            name = func.attr if type(func) is ast.Attribute else func.id if type(func) is ast.Name else None
            if name in PY_READERS and (name not in ("get", "setdefault", "pop") or _is_environ(func.value)):
                out |= keys(node.args[0])
        elif type(node) is ast.Subscript and type(node.ctx) is ast.Load and _is_environ(node.value):
            out |= keys(node.slice)
        elif type(node) is ast.Compare and len(node.ops) == 1 and type(node.ops[0]) in (ast.In, ast.NotIn) \
                and _is_environ(node.comparators[0]):
            out |= keys(node.left)
    return {n for n in out if ENV_NAME_RE.match(n)}


def release_names(gitdir: str, tag: str) -> set[str]:
    paths = files(gitdir, tag)
    cpp = {p: git(gitdir, "show", f"{tag}:{p}") for p in paths if p.endswith(CPP_SUFFIXES)}
    names = cpp_names(cpp)
    env_consts: dict[str, str] = {}
    if "torch_xla/core/xla_env_vars.py" in paths:
        tree = ast.parse(git(gitdir, "show", f"{tag}:torch_xla/core/xla_env_vars.py"))
        for node in tree.body:
            if type(node) is ast.Assign and type(node.targets[0]) is ast.Name and _strings(node.value):
                env_consts[node.targets[0].id] = _strings(node.value)[0]
        names.update(v for v in env_consts.values() if ENV_NAME_RE.match(v))
    for p in paths:
        if p.startswith("torch_xla/") and p.endswith(".py"):
            names |= py_names(git(gitdir, "show", f"{tag}:{p}"), env_consts)
    return names


def ranges(versions: list[str]) -> str:
    parts, start, prev = [], None, None
    for v in VERSIONS:
        if v in versions:
            start = start or v
            prev = v
        elif start:
            parts.append(start if start == prev else f"{start}-{prev}")
            start = None
    if start:
        parts.append(start if start == prev else f"{start}-{prev}")
    return ",".join(parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("gitdir")
    default = Path(__file__).resolve().parent.parent / "flake8_xla" / "data" / "torch_xla_env_vars.json"
    parser.add_argument("-o", "--output", default=str(default))
    args = parser.parse_args(argv)
    per_release = {v: release_names(args.gitdir, tag) for v, tag in TAGS.items()}
    every = sorted(set().union(*per_release.values()))
    table = {
        "source": "Environment variables read by each pytorch/xla release tag (2.0 = v2.0.0, 2.1 = v2.1.1 "
                  "since the v2.1.0 tag is a pre-release master commit, 2.2-2.9 = vX.Y.0), generated by "
                  "scripts/gen_env_table.py: GetEnv*/getenv arguments and env_vars.cc constants in the C++ "
                  "runtime, os.environ/os.getenv/xu.getenv_as keys and xla_env_vars.py constants in "
                  "torch_xla/*.py. Names only, no torch_xla code.",
        "tags": TAGS,
        "counts": {v: len(names) for v, names in per_release.items()},
        "names": {n: ranges([v for v in VERSIONS if n in per_release[v]]) for n in every},
    }
    with open(args.output, "w", encoding="utf-8") as fh:
        json.dump(table, fh, indent=1, sort_keys=False)
        fh.write("\n")
    print(" ".join(f"{v}:{len(n)}" for v, n in per_release.items()), f"union:{len(every)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
