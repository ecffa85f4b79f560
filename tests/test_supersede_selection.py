"""One finding per fix only among the findings the host reports: a rule left out by
select / ignore supersedes nothing, and XLA505 moving an ``xm.mark_step()`` (not deleting
it) leaves its XLA805 in place (issue 19, 2.9)."""

from __future__ import annotations

import argparse
import ast

from flake8_xla.__main__ import main
from flake8_xla.engine import run
from flake8_xla.flake8_plugin import Plugin
from flake8_xla.registry import hint_codes
from flake8_xla.settings import Settings

SRC = (
    "import torch_xla.core.xla_model as xm\n"
    "def train(model, opt, loader):\n"
    "    for x in loader:\n"
    "        loss = model(x).sum()\n"
    "        loss.backward()\n"
    "        xm.mark_step()\n"        # 6: XLA505 "drop it" (the loop has a trailing sync)
    "        opt.step()\n"
    "        xm.mark_step()\n"        # 8: XLA805
    "def forward_cut(model, opt, loader):\n"
    "    for x in loader:\n"
    "        loss = model(x).sum()\n"
    "        xm.mark_step()\n"        # 12: XLA505 "move it": still deprecated
    "        loss.backward()\n"
    "        opt.step()\n"
)


def _found(settings):
    return {(f.line, f.col, f.code) for f in run(ast.parse(SRC), settings, SRC)}


def test_moved_mark_step_keeps_xla805_deleted_one_does_not():
    assert _found(Settings()) == {(6, 8, "XLA505"), (8, 8, "XLA805"), (12, 8, "XLA505"), (12, 8, "XLA805")}


def test_an_unreported_rule_supersedes_nothing():
    unreported = tuple(c for c in ("XLA505",))
    assert {f for f in _found(Settings(unreported=unreported)) if f[2] == "XLA805"} == {
        (6, 8, "XLA805"), (8, 8, "XLA805"), (12, 8, "XLA805")}


def test_flake8_plugin_takes_the_selection_from_flake8s_options():
    saved = Plugin.settings
    try:
        Plugin.parse_options(argparse.Namespace(
            select=["XLA805"], ignore=None, extend_select=[], extend_ignore=[],
            extended_default_select=["XLA"], extended_default_ignore=[]))
        assert "XLA505" in Plugin.settings.unreported and "XLA805" not in Plugin.settings.unreported
        found = {(line, col, text.split()[0]) for line, col, text, _ in Plugin(ast.parse(SRC), SRC.splitlines(True)).run()}
        assert {f for f in found if f[2] == "XLA805"} == {(6, 8, "XLA805"), (8, 8, "XLA805"), (12, 8, "XLA805")}
    finally:
        Plugin.settings = saved


def test_cli_select_xla805_alone_reports_every_mark_step(tmp_path, capsys, monkeypatch):
    (tmp_path / "t.py").write_text(SRC)
    monkeypatch.chdir(tmp_path)
    assert main(["--isolated", "--select=XLA805", "t.py"]) == 1
    assert capsys.readouterr().out.splitlines() == [
        f"t.py:{n}:9: XLA805 xm.mark_step is deprecated since torch_xla 2.8; use torch_xla.sync()" for n in (6, 8, 12)]


def test_language_server_resolves_the_selection_into_the_settings(tmp_path):
    from flake8_xla.server import resolve

    found = resolve(str(tmp_path / "t.py"), {"select": ["XLA805"], "isolated": True}, tmp_path)
    assert found.error is None and "XLA505" in found.settings.unreported and "XLA805" not in found.settings.unreported
    # by default only the hints (flake8's default-ignore) are left out
    assert resolve(str(tmp_path / "t.py"), {"isolated": True}, tmp_path).settings.unreported == tuple(hint_codes())
