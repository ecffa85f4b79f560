"""Rules users can tune (issue 11, item 3), through real flake8 and pylint: hint-level rules
off by default and on when XLA is selected explicitly, ``xla-reducing-calls`` and
``xla-launchers`` in every config, and the stable documentation URL of each rule."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import flake8_xla
from flake8_xla import registry, settings as settings_mod
from flake8_xla.registry import all_rules, doc_url, hint_codes, is_selected

ROOT = Path(__file__).resolve().parent.parent
RULES = all_rules()

# XLA304 (a hint) on line 5, XLA301 (not a hint) on line 6, XLA507 (a hint) on line 11
HINTED = """import torch_xla
import torch_xla.core.xla_model as xm
from torch.utils.data import DataLoader
def train(model, loss_fn, opt):
    loader = DataLoader(range(8), batch_size=2)
    for step, (x, y) in enumerate(loader):
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        if step % 100 == 0:
            print(step, loss.item())
"""
HINT_LINES = {5: "XLA304", 11: "XLA507"}


def _flake8(args, cwd, isolated=True):
    cmd = [sys.executable, "-m", "flake8", *(["--isolated"] if isolated else []),
           "--format=%(row)d %(code)s", *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, timeout=120)
    assert proc.returncode in (0, 1) and not proc.stderr, proc.stderr
    return {tuple(line.split()) for line in proc.stdout.splitlines()}


def _xla(found):
    return {(int(row), code) for row, code in found if code.startswith("XLA")}


@pytest.fixture()
def hinted(tmp_path):
    (tmp_path / "t.py").write_text(HINTED)
    return tmp_path


def test_the_hints_are_the_rules_whose_docs_say_hint():
    assert {"XLA304", "XLA507"} <= set(hint_codes())
    for code in hint_codes():
        assert "hint" in (RULES[code].__doc__ or "").lower(), code
    assert not RULES["XLA301"].hint


@pytest.mark.parametrize("args,hints_on", [
    ([], False),                                    # a plain flake8 run: default-ignored
    (["--select=XLA"], True),                       # XLA selected explicitly
    (["--extend-select=XLA"], True),
    (["--select=XLA,E9"], True),
    (["--select=XLA3,XLA5"], True),                 # a prefix of the hint, explicitly
    (["--extend-select=XLA1"], False),              # another family selected: hints stay off
    (["--ignore=E501"], True),                      # ignore= replaces flake8's default-ignore list
])
def test_hints_in_flake8(hinted, args, hints_on):
    found = _xla(_flake8([*args, "t.py"], hinted))
    assert (6, "XLA301") in found
    assert {(line, code) for line, code in HINT_LINES.items()} <= found if hints_on else \
        not (found & set(HINT_LINES.items()))
    # the decision front ends share (the CLI) agrees with flake8 on every code
    select = [a.split("=", 1)[1].split(",") for a in args if a.startswith("--select=")]
    extend = [a.split("=", 1)[1].split(",") for a in args if a.startswith("--extend-select=")]
    ignore = [a.split("=", 1)[1].split(",") for a in args if a.startswith("--ignore=")]
    for line, code in [(6, "XLA301"), *HINT_LINES.items()]:
        assert is_selected(code, select[0] if select else None, ignore[0] if ignore else None,
                           extend[0] if extend else ()) == ((line, code) in found), (args, code)


def test_extend_ignore_in_config_silences_one_hint(hinted):
    (hinted / "setup.cfg").write_text("[flake8]\nextend-select = XLA\nextend-ignore = XLA304\n")
    found = _xla(_flake8(["t.py"], hinted, isolated=False))
    assert (11, "XLA507") in found and (6, "XLA301") in found and (5, "XLA304") not in found
    found = _xla(_flake8(["--select=XLA", "t.py"], hinted, isolated=False))
    assert (5, "XLA304") not in found and (11, "XLA507") in found  # the longer prefix wins
    assert not is_selected("XLA304", ["XLA"], None, (), ["XLA304"])
    assert is_selected("XLA507", ["XLA"], None, (), ["XLA304"])


PYLINT = [sys.executable, "-m", "pylint", "--load-plugins=flake8_xla.pylint_plugin", "--persistent=n",
          "--score=n", "--msg-template={line} {msg_id} {symbol}"]


def _pylint(args, cwd):
    proc = subprocess.run([*PYLINT, *args, "t.py"], capture_output=True, text=True, cwd=cwd, timeout=300)
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    return {(int(line.split()[0]), line.split()[1]) for line in proc.stdout.splitlines()
            if line[:1].isdigit() and line.split()[1][1:2] == "7"}


@pytest.mark.parametrize("args,expected", [
    ([], {(6, "W7301")}),                                       # hints disabled by default
    (["--disable=all", "--enable=xla"], {(5, "W7304"), (6, "W7301"), (11, "W7507")}),
    (["--disable=all", "--enable=xla", "--disable=dataloader-ragged-last-batch"], {(6, "W7301"), (11, "W7507")}),
    (["--disable=all", "--enable=W7304"], {(5, "W7304")}),      # one message of one family alone
    (["--enable=host-sync-in-gated-logging"], {(6, "W7301"), (11, "W7507")}),
])
def test_hints_in_pylint(hinted, args, expected):
    assert _pylint(args, hinted) == expected


def test_hints_in_the_cli(hinted):
    proc = subprocess.run([sys.executable, "-m", "flake8_xla", "t.py"], capture_output=True, text=True,
                          cwd=hinted, timeout=120)
    assert "XLA301" in proc.stdout and "XLA304" not in proc.stdout
    proc = subprocess.run([sys.executable, "-m", "flake8_xla", "--select=XLA", "t.py"], capture_output=True,
                          text=True, cwd=hinted, timeout=120)
    assert "XLA304" in proc.stdout


# -- xla-reducing-calls and xla-launchers --------------------------------------------------

TUNED = """import os
import torch_xla
from myproject.comm import mix_replicas
from myproject.tpu import run_on_tpu
def _mp_fn(index, model, opt, loader):
    print(os.environ["RANK"])
    for x in loader:
        model(x).sum().backward()
        mix_replicas(model)
        opt.step()
if __name__ == "__main__":
    torch_xla.launch(_mp_fn, args=(None, None, None))
def _other(index):
    print(os.environ["WORLD_SIZE"])
run_on_tpu(_other)
"""
# without options: XLA201 on line 10 (mix_replicas is unknown), and the WORLD_SIZE read
# outside launched code makes the module look torchrun-launched (no XLA109)
UNTUNED = {(10, "XLA201")}
TUNED_FOUND = {(6, "XLA109"), (14, "XLA109")}


@pytest.fixture()
def tuned(tmp_path):
    (tmp_path / "t.py").write_text(TUNED)
    return tmp_path


def test_options_on_the_flake8_command_line(tuned):
    assert _xla(_flake8(["--select=XLA", "t.py"], tuned)) == UNTUNED
    found = _xla(_flake8(["--select=XLA", "--xla-reducing-calls=myproject.comm.mix_replicas",
                          "--xla-launchers=run_on_tpu", "t.py"], tuned))
    assert found == TUNED_FOUND


@pytest.mark.parametrize("name", ["setup.cfg", "tox.ini", ".flake8"])
def test_options_in_flake8_config(tuned, name):
    (tuned / name).write_text("[flake8]\nxla-reducing-calls =\n    myproject.comm.mix_replicas,\n"
                              "    other.helper\nxla-launchers = myproject.tpu.run_on_tpu\n")
    assert _xla(_flake8(["--select=XLA", "t.py"], tuned, isolated=False)) == TUNED_FOUND


def test_bad_option_value_in_flake8(tuned):
    proc = subprocess.run([sys.executable, "-m", "flake8", "--isolated", "--select=XLA",
                           "--xla-launchers=my-launcher", "t.py"], capture_output=True, text=True, cwd=tuned,
                          timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip() == ("flake8: error: option --xla-launchers: invalid value 'my-launcher' "
                                   "(a dotted name such as mylib.dist.sync_grads)")


def test_options_in_pylint(tuned):
    args = ["--disable=all", "--enable=xla"]
    assert _pylint(args, tuned) == {(10, "E7201")}
    assert _pylint([*args, "--xla-reducing-calls=mix_replicas", "--xla-launchers=myproject.tpu.run_on_tpu"],
                   tuned) == {(6, "E7109"), (14, "E7109")}
    (tuned / "pyproject.toml").write_text('[tool.pylint.xla]\nxla-reducing-calls = ["myproject.comm.mix_replicas"]\n'
                                          'xla-launchers = "run_on_tpu"\n')
    assert _pylint(args, tuned) == {(6, "E7109"), (14, "E7109")}


def test_parse_names():
    assert settings_mod.parse_names("a.b, c\n d", "--x") == ("a.b", "c", "d")
    assert settings_mod.parse_names(["a.b", "c,d", "a.b"], "--x") == ("a.b", "c", "d")
    assert settings_mod.parse_names(None, "--x") == () == settings_mod.parse_names("", "--x")
    with pytest.raises(settings_mod.SettingsError, match="option --x: invalid value '1abc'"):
        settings_mod.parse_names("1abc", "--x")


# -- the documentation URL of each rule ----------------------------------------------------

def test_doc_url_default_is_this_releases_page_in_the_docs_tree():
    """With no xla-docs-url, each rule links its page in the installed release's tree (the
    repository at the tag v<version>), and that page is a file of the docs tree here; an
    unknown code links the rules' index."""
    tree = f"{flake8_xla.__url__}/blob/v{flake8_xla.__version__}/"
    assert settings_mod.DEFAULT_DOCS_URL == tree + "docs/rules/{code}.md"
    for code in RULES:
        url = doc_url(code)
        assert url.startswith(tree), url
        assert url == tree + f"docs/rules/{code}.md" and (ROOT / url.removeprefix(tree)).is_file()
    assert doc_url("XLA000") == tree + "docs/index.md" and (ROOT / "docs" / "index.md").is_file()
    assert doc_url("XLA805", settings_mod.Settings(docs_url=None)) is None


def test_doc_url_template_for_a_fork():
    fork = settings_mod.Settings(docs_url="https://example.org/xla/{code}.html#{name}")
    assert doc_url("XLA101", fork) == "https://example.org/xla/XLA101.html#ddp-without-gradient-as-bucket-view"
    assert doc_url("XLA000", fork) == "https://example.org/xla/index.html#index"
    assert registry.doc_url("XLA101") == doc_url("XLA101", settings_mod.Settings())


def test_options_in_the_cli_config(tuned):
    (tuned / "pyproject.toml").write_text('[tool.flake8-xla]\nxla-reducing-calls = ["myproject.comm.mix_replicas"]\n'
                                          'xla-launchers = ["run_on_tpu"]\n')
    proc = subprocess.run([sys.executable, "-m", "flake8_xla", "--format=json", "t.py"], capture_output=True,
                          text=True, cwd=tuned, timeout=120)
    assert proc.returncode == 1, proc.stderr
    import json
    assert {(f["line"], f["code"]) for f in json.loads(proc.stdout)} == TUNED_FOUND
