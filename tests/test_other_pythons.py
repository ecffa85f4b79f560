"""The engine on the other CPython versions on this machine (3.10 to 3.14 where present):
newer syntax (PEP 695/696/701/758, t-strings) and the cases that need them, without flake8."""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = r"""
import ast, json, sys, textwrap
from pathlib import Path
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, sys.argv[1] + "/tests")
from flake8_xla import engine
from flake8_xla.settings import build
from annotations import parse_case
from flake8_xla.registry import all_rules
import syntax_samples as rb
built = set(all_rules())
out = {"version": list(sys.version_info[:2]), "errors": [], "cases": 0, "syntax": 0}
for version, src in rb.SYNTAX.items():
    if sys.version_info[:2] >= version:
        source = rb.HEADER + textwrap.dedent(src)
        found = engine.run(ast.parse(source), build("always"), source)
        out["syntax"] += 1
        if any(f.code == "XLA000" for f in found):
            out["errors"].append(f"syntax {version}: {found}")
for path in sorted(Path(sys.argv[2]).glob("*.py")):
    case = parse_case(path)
    if case.requires and sys.version_info[:2] < case.requires:
        continue
    for name, flags in case.variants.items():
        opts = dict(f.split("=", 1) for f in flags)
        source = path.read_text()
        found = engine.run(ast.parse(source), build(opts.get("--xla-scope"), opts.get("--xla-version")), source)
        got = {(f.line, f.code) for f in found}
        want = {e for e in case.expected[name] if e[1] in built}  # codes with no rule yet wait
        out["cases"] += 1
        if got != want:
            out["errors"].append(f"{path.name}[{name}]: got {sorted(got)} expected {sorted(want)}")
print(json.dumps(out))
"""


def _interpreters():
    found = {}
    candidates = [shutil.which(f"python3.{m}") for m in range(10, 15)]
    candidates += glob.glob(os.path.expanduser("~/.pyenv/versions/3.1[0-4]*/bin/python3"))
    for exe in candidates:
        if not exe:
            continue
        try:
            version = subprocess.run([exe, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                                     capture_output=True, text=True, timeout=30).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            continue
        if version and version not in found:
            found[version] = exe
    return found


INTERPRETERS = _interpreters()


@pytest.mark.parametrize("version", sorted(INTERPRETERS) or ["none"])
def test_engine_on_other_python(version):
    if version == "none":
        pytest.skip("no other CPython 3.10-3.14 on this machine")
    proc = subprocess.run([INTERPRETERS[version], "-c", SCRIPT, str(ROOT), str(ROOT / "tests" / "cases")],
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["errors"] == []
    assert result["cases"] >= 20 and result["syntax"] >= 1
