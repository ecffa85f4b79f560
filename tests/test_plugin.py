"""The flake8 adapter end to end: options, config files, bad values, the example, the guard."""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from flake8_runner import flake8
from flake8_xla import engine
from flake8_xla.registry import Rule
from flake8_xla.settings import Settings, SettingsError, build, parse_version

ROOT = Path(__file__).resolve().parent.parent

PORTING = textwrap.dedent("""\
    import torch.multiprocessing as mp
    import torch.distributed as dist


    def fn(rank):
        dist.init_process_group("gloo", rank=rank, world_size=2)


    mp.spawn(fn, nprocs=2)
""")

DEPRECATED = "import torch_xla.core.xla_model as xm\nxm.mark_step()\nn = xm.xrt_world_size()\n"


def _run(args, cwd):
    return subprocess.run([sys.executable, "-m", "flake8", *args], capture_output=True, text=True, cwd=cwd, timeout=120)


def test_scope_option_from_command_line_and_each_config_file(tmp_path):
    src = tmp_path / "port.py"
    src.write_text(PORTING)
    assert flake8([src])[src.resolve()] == set()
    expected = {(6, 5, "XLA103"), (9, 1, "XLA002")}
    assert flake8([src], ["--xla-scope=always"])[src.resolve()] == expected
    for name in ("setup.cfg", "tox.ini", ".flake8"):
        cfg = tmp_path / name
        cfg.write_text("[flake8]\nxla-scope = always\n")
        proc = _run(["--select=XLA", "--format=%(row)d:%(code)s", "port.py"], tmp_path)
        assert proc.stdout.split() == ["6:XLA103", "9:XLA002"], (name, proc.stdout, proc.stderr)
        cfg.unlink()


def test_version_option_changes_findings_and_wording(tmp_path):
    src = tmp_path / "old.py"
    src.write_text(DEPRECATED)
    proc = _run(["--isolated", "--select=XLA", "--xla-version=2.6", "old.py"], tmp_path)
    assert proc.stdout.splitlines() == [
        "old.py:3:5: XLA801 xm.xrt_world_size is deprecated since torch_xla 2.5, removed in 2.7; use xr.world_size()",
    ]
    proc = _run(["--isolated", "--select=XLA", "old.py"], tmp_path)
    assert [line.split(": ", 1)[1][:6] for line in proc.stdout.splitlines()] == ["XLA805", "XLA801"]
    assert "was removed in torch_xla 2.7; use xr.world_size()" in proc.stdout
    assert _run(["--isolated", "--select=XLA", "--xla-version=2.4", "old.py"], tmp_path).stdout == ""


@pytest.mark.parametrize("args,config,needle", [
    (["--xla-scope=sometimes"], None, "option --xla-scope: invalid value 'sometimes' (choose from 'auto', 'always')"),
    (["--xla-version=1.9"], None, "option --xla-version: invalid value '1.9' (choose a torch_xla release, 2.0 or newer"),
    ([], "xla-version = latest\n", "option --xla-version: invalid value 'latest'"),
    ([], "xla-scope = never\n", "option --xla-scope: invalid value 'never'"),
])
def test_bad_option_value_is_one_line_no_traceback(tmp_path, args, config, needle):
    (tmp_path / "a.py").write_text("import torch_xla\n")
    if config:
        (tmp_path / "setup.cfg").write_text("[flake8]\n" + config)
    proc = _run([*args, "a.py"], tmp_path)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], proc.stderr


def test_settings_parsing():
    assert build() == Settings("auto", (2, 9))
    assert build("ALWAYS", "2.7").scope == "always"
    assert parse_version("v2.5.1") == (2, 5)
    assert parse_version("2.10") == (2, 9)  # newer than the tables: warns once, lints for the newest
    with pytest.raises(SettingsError):
        parse_version("1.9")


def test_bundled_example_findings():
    found = flake8([ROOT / "examples" / "train_port.py", ROOT / "examples" / "train_port_done.py"])
    port = sorted((line, code) for line, _, code in found[(ROOT / "examples" / "train_port.py").resolve()])
    assert port == [(21, "XLA109"), (26, "XLA103"), (27, "XLA104"), (28, "XLA804"), (29, "XLA402"),
                    (30, "XLA101"), (30, "XLA102"), (34, "XLA301"), (35, "XLA401"), (40, "XLA805"), (44, "XLA001")]
    assert found[(ROOT / "examples" / "train_port_done.py").resolve()] == set()


class _Boom(Rule):
    code = "XLA999"
    name = "boom"
    message = "boom"
    fix = "none"

    def check(self, model):
        raise KeyError("injected")


def test_failing_rule_becomes_one_xla000_and_others_still_run(capsys):
    from flake8_xla.registry import all_rules
    src = DEPRECATED
    rules = [_Boom, *all_rules().values()]
    found = engine.run(ast.parse(src), Settings(), src, rules=rules)
    codes = [f.code for f in found]
    assert codes.count("XLA000") == 1
    assert {"XLA805", "XLA801"} <= set(codes)
    xla000 = next(f for f in found if f.code == "XLA000")
    assert (xla000.line, xla000.col) == (1, 0)
    assert xla000.message == "internal error in XLA999 (KeyError); please report"
    out = capsys.readouterr()
    assert out.out == out.err == ""


def test_fast_path_skips_files_without_torch_xla():
    tree = ast.parse("import torch\nx = torch.ones(2).cuda()\n")
    assert engine.run(tree, Settings(), "import torch\nx = torch.ones(2).cuda()\n") == []
    assert not engine.needs_walk("import numpy\n", Settings(scope="always"))
    assert engine.needs_walk("import torch\n", Settings(scope="always"))
    assert not engine.needs_walk("import torch\n", Settings())


@pytest.mark.parametrize("scope", ["auto", "always"])
def test_fast_path_lets_env_writes_through(scope):
    """torch_xla's variables are checked whatever the module imports: a prefix and a setter
    let the file through; either alone does not."""
    settings = Settings(scope=scope)
    for text in ('import os\nos.environ["XLA_USE_BF16"] = "1"\n', 'import os\nos.putenv("PJRT_DEVICES", "TPU")\n',
                 'from os import environ\nenviron.update(XRT_WORKERS="x")\n'):
        assert engine.needs_walk(text, settings), text
        assert [f.code for f in engine.run(ast.parse(text), settings, text)], text
    for text in ('import os\nos.environ["HOME"] = "/"\n', 'XLA_USE_BF16 = 1\n', "import numpy\n"):
        assert not engine.needs_walk(text, settings), text


def test_lint_never_imports_the_linted_code_or_torch(tmp_path):
    marker = tmp_path / "imported.marker"
    mod = tmp_path / "evil.py"
    mod.write_text(
        "import pathlib\n"
        f"pathlib.Path({str(marker)!r}).write_text('ran')\n"
        "import torch_xla\nimport torch\n"
        "def f(i):\n    return i.cuda()\n"
        "torch_xla.launch(f)\n"
    )
    code = (
        "import sys, flake8.main.cli as cli\n"
        "try:\n"
        f"    cli.main(['--isolated', '--select=XLA', {str(mod)!r}])\n"
        "except SystemExit:\n    pass\n"
        "bad = [m for m in sys.modules if m == 'torch' or m.startswith(('torch.', 'torch_xla'))]\n"
        "print('IMPORTED', bad)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert "XLA401" in proc.stdout
    assert "IMPORTED []" in proc.stdout, proc.stdout + proc.stderr
    assert not marker.exists()
