"""Adopting flake8-xla on an existing codebase, end to end through the CLI (and the plugins
where they share the option): ``--write-baseline`` / ``--baseline`` (``xla-baseline``),
``--add-noqa``, ``--statistics``, ``--show-fixes``; and the paper cuts a new user met: no
placeholder URL anywhere, ``[flake8] extend-select`` read by the CLI, a torch_xla release
newer than the tables, a CUDA script ``--fix`` skipped.

The CLI runs in this process (``main``) where it can, to keep the default run fast; the
flake8 and pylint hosts run as subprocesses."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import flake8_xla
from flake8_xla import settings as settings_mod
from flake8_xla.__main__ import main
from flake8_xla.cli.output import _plain, rule_page
from flake8_xla.registry import all_rules

ROOT = Path(__file__).resolve().parent.parent
MSG101 = "XLA101 DDP on XLA without gradient_as_bucket_view=True; pass gradient_as_bucket_view=True"
MSG805 = "XLA805 xm.mark_step is deprecated since torch_xla 2.8; use torch_xla.sync()"
TRAIN = ("import torch_xla\n"
         "import torch_xla.core.xla_model as xm\n"
         "from torch.nn.parallel import DistributedDataParallel as DDP\n"
         "def f(model):\n"
         "    return DDP(model)\n"
         "def g(model):\n"
         "    return DDP(model)\n"
         "xm.mark_step()\n")


@pytest.fixture()
def run(monkeypatch, capsys):
    """``run(args, cwd)`` -> (exit status, stdout, stderr) of the CLI run in ``cwd``."""

    def call(args, cwd):
        monkeypatch.chdir(cwd)
        try:
            status = main([str(a) for a in args])
        except SystemExit as exc:
            status = exc.code
        out, err = capsys.readouterr()
        return status, out, err

    return call


@pytest.fixture()
def project(tmp_path):
    """A project root (it has .git) with pkg/train.py."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "train.py").write_text(TRAIN)
    return tmp_path


BASELINE = """{
  "version": 1,
  "tool": "flake8-xla",
  "findings": [
    {
      "path": "pkg/train.py",
      "code": "XLA101",
      "line": "return DDP(model)",
      "count": 2
    },
    {
      "path": "pkg/train.py",
      "code": "XLA805",
      "line": "xm.mark_step()",
      "count": 1
    }
  ]
}
"""


# --- baseline ---------------------------------------------------------------------------

def test_write_baseline_then_only_new_findings_are_reported(project, run):
    assert run(["--write-baseline", "bl.json", "pkg"], project) == (
        0, "", "flake8-xla: recorded 3 findings in bl.json\n")
    # keyed by path from the project root, code and the stripped line; two equal lines counted
    assert (project / "bl.json").read_text() == BASELINE
    assert run(["--baseline", "bl.json", "pkg"], project) == (0, "", "")
    # lines moved by an unrelated edit stay accepted; a third equal finding is new
    (project / "pkg" / "train.py").write_text("# a header\n" + TRAIN + "def h(model):\n    return DDP(model)\n")
    assert run(["--baseline", "bl.json", "pkg"], project) == (1, f"pkg/train.py:11:12: {MSG101}\n", "")
    # the same keys from a subfolder (paths relative to the root, not the current folder)
    assert run(["--baseline", "../bl.json", "."], project / "pkg") == (1, f"./train.py:11:12: {MSG101}\n", "")
    # the baseline from the configuration (relative to the file that sets it)
    (project / "pyproject.toml").write_text('[tool.flake8-xla]\nxla-baseline = "bl.json"\n')
    assert run(["train.py"], project / "pkg") == (1, f"train.py:11:12: {MSG101}\n", "")
    # writing again records today's findings, whatever baseline is configured (even a missing one)
    (project / "bl.json").unlink()
    assert run(["--write-baseline", "bl.json", "pkg"], project)[0] == 0
    assert '"count": 3' in (project / "bl.json").read_text()
    assert run(["pkg"], project) == (0, "", "")


def test_baseline_never_hides_a_file_that_was_not_linted(project, run):
    (project / "pkg" / "broken.py").write_text("def f(:\n")
    assert run(["--write-baseline", "bl.json", "pkg"], project)[0] == 0
    assert "broken.py" not in (project / "bl.json").read_text()
    assert run(["--baseline", "bl.json", "pkg"], project) == (
        1, "pkg/broken.py:1:8: E999 SyntaxError: invalid syntax\n", "")


@pytest.mark.parametrize("text,why", [
    ("{", "option --xla-baseline: bl.json is not JSON (Expecting property name enclosed in double quotes: "
          "line 1 column 2 (char 1))"),
    ('{"findings": []}', "option --xla-baseline: bl.json is not a flake8-xla baseline (write one with --write-baseline)"),
    ('{"tool": "flake8-xla", "version": 2, "findings": []}',
     "option --xla-baseline: bl.json has baseline version 2; this flake8-xla reads version 1 "
     "(write it again with --write-baseline)"),
    ('{"tool": "flake8-xla", "version": 1, "findings": [{"path": "a.py"}]}',
     "option --xla-baseline: bl.json: findings[0] needs path, code and line (strings) and count (a positive integer)"),
])
def test_a_bad_baseline_is_one_line_and_exit_2(project, run, text, why):
    (project / "bl.json").write_text(text)
    assert run(["--baseline", "bl.json", "pkg"], project) == (2, "", f"flake8-xla: error: {why}\n")


def test_missing_baseline_is_a_usage_error(project, run):
    assert run(["--baseline", "no.json", "pkg"], project) == (
        2, "", "flake8-xla: error: option --xla-baseline: cannot read no.json: No such file or directory\n")


def test_flake8_and_pylint_honour_the_baseline(project, run):
    assert run(["--write-baseline", "bl.json", "pkg"], project)[0] == 0
    (project / "pkg" / "train.py").write_text(TRAIN + "def h(model):\n    return DDP(model)\n")
    flake8 = [sys.executable, "-m", "flake8", "--isolated", "--select=XLA"]
    proc = subprocess.run([*flake8, "--xla-baseline=bl.json", "pkg"], capture_output=True, text=True,
                          cwd=project, timeout=120)
    assert (proc.returncode, proc.stdout, proc.stderr) == (1, f"pkg/train.py:10:12: {MSG101}\n", "")
    # in [flake8]: a path with a / is relative to the config file, as flake8's exclude
    (project / "setup.cfg").write_text("[flake8]\nxla-baseline = ./bl.json\n")
    proc = subprocess.run([sys.executable, "-m", "flake8", "--select=XLA", "train.py"], capture_output=True,
                          text=True, cwd=project / "pkg", timeout=120)
    assert (proc.returncode, proc.stdout, proc.stderr) == (1, f"train.py:10:12: {MSG101}\n", "")
    assert run(["train.py"], project / "pkg") == (1, f"train.py:10:12: {MSG101}\n", "")  # the CLI reads it so too
    pylint = [sys.executable, "-m", "pylint", "--load-plugins=flake8_xla.pylint_plugin", "--disable=all",
              "--enable=xla", "--persistent=n", "--score=n", "--msg-template={line} {msg_id} {msg}",
              "--xla-baseline=bl.json", "pkg/train.py"]
    proc = subprocess.run(pylint, capture_output=True, text=True, cwd=project, timeout=120)
    assert [line for line in proc.stdout.splitlines() if not line.startswith("*")] == [
        f"10 E7101 {MSG101}"], proc.stdout + proc.stderr


# --- --add-noqa -------------------------------------------------------------------------

NOQA_BEFORE = (b"import torch_xla\r\n"
               b"import torch_xla.core.xla_model as xm\r\n"
               b"from torch.nn.parallel import DistributedDataParallel as DDP\r\n"
               b"def f(model):\r\n"
               b"    return DDP(model)   \r\n"
               b"def g(model):\r\n"
               b"    return DDP(model)  # noqa: E501 (long)\r\n"
               b"x = xm.mark_step(doc='''a\r\n"
               b"b''')\r\n"
               b"y = xm.mark_step() + DDP(m)  # noqa\r\n"
               b"z = xm.mark_step() + DDP(m)")
NOQA_AFTER = (b"import torch_xla\r\n"
              b"import torch_xla.core.xla_model as xm\r\n"
              b"from torch.nn.parallel import DistributedDataParallel as DDP\r\n"
              b"def f(model):\r\n"
              b"    return DDP(model)  # noqa: XLA101\r\n"
              b"def g(model):\r\n"
              b"    return DDP(model)  # noqa: E501, XLA101 (long)\r\n"
              b"x = xm.mark_step(doc='''a\r\n"
              b"b''')  # noqa: XLA805\r\n"
              b"y = xm.mark_step() + DDP(m)  # noqa\r\n"
              b"z = xm.mark_step() + DDP(m)  # noqa: XLA101, XLA805")


def test_add_noqa_end_to_end(project, run):
    path = project / "pkg" / "train.py"
    path.write_bytes(NOQA_BEFORE)
    assert run(["--add-noqa", "pkg"], project) == (0, "", "flake8-xla: added noqa codes to 4 lines in 1 file\n")
    # CRLF and the missing final newline kept; the multi-line string's comment on its last line;
    # merged into `# noqa: E501`; a bare `# noqa` left alone
    assert path.read_bytes() == NOQA_AFTER
    assert run(["pkg"], project) == (0, "", "")
    # idempotent
    assert run(["--add-noqa", "pkg"], project) == (0, "", "flake8-xla: added noqa codes to 0 lines in 0 files\n")
    assert path.read_bytes() == NOQA_AFTER
    proc = subprocess.run([sys.executable, "-m", "flake8", "--isolated", "--select=XLA", "pkg"], capture_output=True,
                          text=True, cwd=project, timeout=120)
    assert (proc.returncode, proc.stdout) == (0, "")


def test_add_noqa_writes_through_the_fix_writer(project, run):
    """A file with two hard links is not replaced (the writer of --fix refuses it), and the run says so."""
    path = project / "pkg" / "train.py"
    os.link(path, project / "other.py")
    assert run(["--add-noqa", "pkg"], project) == (
        2, "", "pkg/train.py: not written: it has 2 hard links; replacing it would split them\n"
               "flake8-xla: added noqa codes to 0 lines in 0 files, 1 file not written\n")
    assert path.read_text() == TRAIN


def test_add_noqa_refuses_stdin_and_fix(project, run):
    assert run(["--add-noqa", "-"], project) == (
        2, "", "flake8-xla: error: --add-noqa edits files: it cannot read standard input (-)\n")
    assert run(["--add-noqa", "--fix", "pkg"], project) == (
        2, "", "flake8-xla: error: --add-noqa cannot be combined with --fix or --diff\n")


NB_CELLS = [  # (kind, source): a magic, a multi-line call whose finding is on its first line
    ("markdown", "# Training on TPU\nnaïve prose: `xm.mark_step()`"),
    ("code", "!pip install torch_xla\nimport torch_xla\nimport torch_xla.core.xla_model as xm\n"
             "n = xm.xrt_world_size()"),
    ("code", "from torch.nn.parallel import DistributedDataParallel as DDP\n"
             "def f(model):\n    return DDP(model,\n               broadcast_buffers=False)\n"
             "xm.mark_step()  # sync\nd = xm.xla_device()"),
]


def _notebook(path: Path) -> Path:
    import nbformat

    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "python3", "language": "python",
                                                           "display_name": "Python 3"}})
    for n, (kind, text) in enumerate(NB_CELLS):
        cell = (nbformat.v4.new_code_cell if kind == "code" else nbformat.v4.new_markdown_cell)(text)
        cell["id"] = f"c{n}"
        nb.cells.append(cell)
    nb.cells[2].outputs = [nbformat.v4.new_output("stream", text="épreuve\n")]
    nb.cells[2].execution_count = 3
    nb.cells[2].metadata["tags"] = ["train"]
    nbformat.write(nb, str(path))
    return path


@pytest.mark.parametrize("named", [True, False], ids=["named", "found-in-a-folder"])
def test_add_noqa_on_a_notebook_edits_the_cells_and_keeps_it_a_notebook(project, run, monkeypatch, named):
    """The findings' lines are lines of their cells: the comments go on those cells' own
    source lines (the multi-line call's on its first line, the one with a comment merged
    after it), written by --fix's atomic writer; outputs, metadata, ids and every other
    byte stay, nbformat validates it, a second run changes nothing and the lint is clean.
    (It wrote `# noqa` into the JSON text at the cells' line numbers: no longer JSON.)"""
    import nbformat

    from flake8_xla import fix as fix_pkg

    path = _notebook(project / "pkg" / "nb.ipynb")
    before = path.read_text(encoding="utf-8")
    assert run(["pkg/nb.ipynb"], project)[1].count("pkg/nb.ipynb:cell ") == 4
    written = []
    real_writer = fix_pkg.write_atomic
    monkeypatch.setattr(fix_pkg, "write_atomic", lambda *a: (written.append(a[0]), real_writer(*a)))
    (project / "pkg" / "train.py").unlink()
    status, out, err = run(["--add-noqa", "pkg/nb.ipynb" if named else "."], project)
    assert (status, out, err) == (0, "", "flake8-xla: added noqa codes to 4 lines in 1 file\n")
    assert written == [path.resolve()]
    after = path.read_text(encoding="utf-8")
    want = before
    for old, new in [("n = xm.xrt_world_size()", "n = xm.xrt_world_size()  # noqa: XLA801"),
                     ("    return DDP(model,\n", "    return DDP(model,  # noqa: XLA101\n"),
                     ("xm.mark_step()  # sync\n", "xm.mark_step()  # sync  # noqa: XLA805\n"),
                     ("d = xm.xla_device()", "d = xm.xla_device()  # noqa: XLA804")]:
        old, new = (json.dumps(t)[1:-1] for t in (old, new))  # as the JSON text spells them
        assert want.count(old) == 1
        want = want.replace(old, new)
    assert after == want
    nb = nbformat.reads(after, as_version=4)
    nbformat.validate(nb)
    assert nb.cells[2].outputs[0]["text"] == "épreuve\n" and nb.cells[2].metadata == {"tags": ["train"]}
    assert nb.cells[1].source.splitlines()[0] == "!pip install torch_xla"  # the magic has no comment
    assert run(["pkg"], project)[:2] == (0, "")
    assert run(["--add-noqa", "pkg"], project) == (0, "", "flake8-xla: added noqa codes to 0 lines in 0 files\n")
    assert path.read_text(encoding="utf-8") == want


def test_add_noqa_on_a_notebook_finding_on_a_magic_line_is_left_alone(tmp_path):
    """A finding on a magic line: the shell would get a comment there; nothing is written."""
    from flake8_xla.cli.noqa import add_noqa_notebook

    text = _notebook(tmp_path / "nb.ipynb").read_text(encoding="utf-8")
    assert add_noqa_notebook(text, [(2, 1, "XLA801")]) == (text, 0)


def test_baseline_of_a_notebook_hides_its_findings_and_keeps_it(project, run):
    """--write-baseline records a notebook's findings by their lines' text (not positions
    in the JSON text): --baseline then hides exactly them, and the notebook is not touched."""
    path = _notebook(project / "pkg" / "nb.ipynb")
    before = path.read_bytes()
    assert run(["--write-baseline", "b.json", "pkg"], project)[0] == 0
    assert path.read_bytes() == before
    assert run(["--baseline", "b.json", "pkg"], project)[:2] == (0, "")
    cells = json.loads(before)
    cells["cells"][2]["source"].append("\nxm.mark_step()")
    path.write_text(json.dumps(cells), encoding="utf-8")
    status, out, _ = run(["--baseline", "b.json", "pkg"], project)
    assert (status, out) == (1, "pkg/nb.ipynb:cell 3:7:1: " + MSG805 + "\n")


@pytest.mark.parametrize("line,codes,want", [
    ("x = 1\n", ["XLA101"], "x = 1  # noqa: XLA101\n"),
    ("x = 1  # noqa:E501,W291\n", ["XLA101"], "x = 1  # noqa:E501,W291,XLA101\n"),
    ("x = 1  # NOQA: XLA101\n", ["XLA101"], None),
    ("x = 1  # noqa\n", ["XLA101"], None),
    ("x = 1  # keep this\r", ["XLA805", "XLA101"], "x = 1  # keep this  # noqa: XLA805, XLA101\r"),
])
def test_add_to_line(line, codes, want):
    from flake8_xla.cli.noqa import add_to_line

    assert add_to_line(line, codes) == want


def test_add_noqa_text_in_a_multiline_call():
    """Inside brackets each physical line ends with a token (NL): the comment goes on the
    finding's own line; a backslash continuation joins lines, so its last line gets it."""
    from flake8_xla.cli.noqa import add_noqa_text

    text = "f(a,\n  b)\nx = 1 + \\\n  2\n"
    assert add_noqa_text(text, [(1, "XLA101"), (3, "XLA805")]) == (
        "f(a,  # noqa: XLA101\n  b)\nx = 1 + \\\n  2  # noqa: XLA805\n", 2)
    # a `# noqa` flake8 reads inside a string: the string is never edited, the line left alone
    text = 's = DDP(m, "# noqa: E501")\nt = DDP(m, "#")  # noqa: E501\n'
    assert add_noqa_text(text, [(1, "XLA101"), (2, "XLA101")]) == (
        's = DDP(m, "# noqa: E501")\nt = DDP(m, "#")  # noqa: E501, XLA101\n', 1)


# --- --statistics and --show-fixes ------------------------------------------------------

def test_statistics(project, run):
    (project / "pkg" / "a.py").write_text("import torch_xla.core.xla_model as xm\nxm.mark_step()\n")
    status, out, err = run(["--statistics", "pkg"], project)
    assert (status, err) == (1, "")
    assert out == (f"pkg/a.py:2:1: {MSG805}\n"
                   f"pkg/train.py:5:12: {MSG101}\n"
                   f"pkg/train.py:7:12: {MSG101}\n"
                   f"pkg/train.py:8:1: {MSG805}\n"
                   f"2     {MSG101}\n"
                   f"2     {MSG805}\n")
    status, out, err = run(["--statistics", "--format=json", "pkg"], project)
    assert len(json.loads(out)) == 4 and err == f"2     {MSG101}\n2     {MSG805}\n"


def test_show_fixes(project, run):
    pytest.importorskip("libcst")
    (project / "pkg" / "a.py").write_text("import torch_xla.core.xla_model as xm\nxm.mark_step()\n")
    show = ("Fixed 4 findings:\n"
            "- pkg/a.py:\n"
            "    1 x XLA805 (deprecated-mark-step)\n"
            "- pkg/train.py:\n"
            "    2 x XLA101 (ddp-without-gradient-as-bucket-view)\n"
            "    1 x XLA805 (deprecated-mark-step)\n")
    status, out, err = run(["--diff", "--show-fixes", "pkg"], project)
    assert status == 1 and err == show.replace("Fixed", "Would fix") + \
        "flake8-xla: would fix 4 findings, 0 would remain\n"
    assert run(["--fix", "--show-fixes", "pkg"], project) == (0, "", show + "flake8-xla: fixed 4 findings, 0 remaining\n")
    assert run(["--fix", "--show-fixes", "pkg"], project) == (
        0, "", "No findings fixed.\nflake8-xla: fixed 0 findings, 0 remaining\n")
    status, out, err = run(["--show-fixes", "pkg"], project)  # nothing to show without a fix
    assert (status, out) == (2, "") and err.endswith("flake8-xla: error: --show-fixes needs --fix or --diff\n")


# --- paper cuts -------------------------------------------------------------------------

def _shipped_files():
    for folder, pattern in (("flake8_xla", "**/*"), ("docs", "**/*.md")):
        yield from (p for p in (ROOT / folder).glob(pattern) if p.is_file() and "__pycache__" not in p.parts)
    for name in ("README.md", "CHANGELOG.md", "setup.cfg", "pyproject.toml", ".pre-commit-hooks.yaml"):
        yield ROOT / name


def test_no_placeholder_url_and_one_project_url(project, run):
    """No made-up owner anywhere; the project's address is flake8_xla.__url__ wherever it is
    written, and the links the outputs carry by default are this release's pages."""
    assert not [p for p in _shipped_files() if "OWNER" in p.read_text(encoding="utf-8", errors="replace")]
    addresses = {m for p in _shipped_files()
                 for m in re.findall(r"https://github\.com/[\w.-]+/flake8-xla\b", p.read_text(encoding="utf-8", errors="replace"))}
    assert addresses <= {flake8_xla.__url__}
    outputs = [run(args, project)[1] for args in (["--format=json", "pkg"], ["--format=sarif", "pkg"],
                                                  ["rule", "--all"], ["--list-rules", "--format=json"])]
    assert not [o for o in outputs if "OWNER" in o]
    page = f"{flake8_xla.__url__}/blob/v{flake8_xla.__version__}/docs/rules/"
    assert {d["url"] for d in json.loads(outputs[0])} == {page + "XLA101.md", page + "XLA805.md"}
    driver = json.loads(outputs[1])["runs"][0]["tool"]["driver"]
    assert driver["informationUri"] == flake8_xla.__url__
    rules = {r["id"]: r for r in driver["rules"]}
    for code in all_rules():  # each rule's full page as help, and its link
        page_text = rule_page(code)
        assert rules[code]["help"] == {"text": _plain(page_text), "markdown": page_text}
        assert rules[code]["helpUri"] == page + f"{code}.md"
    assert "helpUri" not in rules["E999"]
    assert outputs[2].count("\nDocs: " + page) == len(all_rules())
    assert run(["rule", "XLA101"], project)[1] == \
        (ROOT / "docs" / "rules" / "XLA101.md").read_text() + f"\nDocs: {page}XLA101.md\n"


def test_urls_where_the_user_configured_them(project, run):
    (project / "pyproject.toml").write_text('[tool.flake8-xla]\nxla-docs-url = "https://docs.example/{code}.html"\n')
    data = json.loads(run(["--format=json", "pkg"], project)[1])
    assert [d["url"] for d in data] == ["https://docs.example/XLA101.html"] * 2 + ["https://docs.example/XLA805.html"]
    sarif = json.loads(run(["--format=sarif", "pkg"], project)[1])
    rules = {r["id"]: r for r in sarif["runs"][0]["tool"]["driver"]["rules"]}
    assert rules["XLA101"]["helpUri"] == "https://docs.example/XLA101.html" and "helpUri" not in rules["E999"]
    assert run(["rule", "XLA101"], project)[1].endswith("\n\nDocs: https://docs.example/XLA101.html\n")
    assert run(["rule", "--isolated", "XLA101"], project)[1].endswith(  # the configuration unread: the default
        f"\n\nDocs: {flake8_xla.__url__}/blob/v{flake8_xla.__version__}/docs/rules/XLA101.md\n")


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


def test_extend_select_in_flake8_config_turns_the_hints_on(tmp_path, run):
    (tmp_path / "t.py").write_text(HINTED)
    status, out, _ = run(["--format=json", "t.py"], tmp_path)
    assert "XLA304" not in out
    (tmp_path / "setup.cfg").write_text("[flake8]\nextend-select = XLA\n")
    codes = [d["code"] for d in json.loads(run(["--format=json", "t.py"], tmp_path)[1])]
    proc = subprocess.run([sys.executable, "-m", "flake8", "--format=%(code)s", "t.py"], capture_output=True,
                          text=True, cwd=tmp_path, timeout=120)
    assert "XLA304" in codes and codes == [c for c in proc.stdout.split() if c.startswith("XLA")]


def test_a_release_newer_than_the_tables_warns_once(project, run, monkeypatch):
    monkeypatch.setattr(settings_mod, "_WARNED_NEWER", set())
    (project / "pkg" / "b.py").write_text(TRAIN)
    newest = run(["--xla-version=2.9", "pkg"], project)
    warning = ("flake8-xla: warning: option --xla-version: torch_xla 2.10 is newer than the rules know (2.0 to 2.9); "
               "linting for 2.9\n")
    assert run(["--xla-version=2.10", "pkg"], project) == (newest[0], newest[1], warning)
    monkeypatch.setattr(settings_mod, "_WARNED_NEWER", set())
    (project / "setup.cfg").write_text("[flake8]\nxla-version = 2.10\n")
    proc = subprocess.run([sys.executable, "-m", "flake8", "--select=XLA", "pkg"], capture_output=True, text=True,
                          cwd=project, timeout=120)
    assert (proc.stdout, proc.stderr) == (newest[1], warning.replace("option --xla-version",
                                                                     "option --xla-version"))
    assert run(["pkg"], project)[2] == warning.replace("option --xla-version", "setup.cfg: [flake8] xla-version")
    assert run(["--xla-version=1.9", "pkg"], project) == (
        2, "", "flake8-xla: error: option --xla-version: invalid value '1.9' "
               "(choose a torch_xla release, 2.0 or newer, e.g. 2.7)\n")


CUDA = ("import torch\nimport torch.multiprocessing as mp\nimport torch.distributed as dist\n"
        "def main(rank):\n    dist.init_process_group(backend='nccl')\n    Net().cuda()\n"
        "if __name__ == '__main__':\n    mp.spawn(main, nprocs=8)\n")


def test_fix_says_a_cuda_script_was_skipped(tmp_path, run):
    pytest.importorskip("libcst")
    (tmp_path / "cuda.py").write_text(CUDA)
    (tmp_path / "plain.py").write_text("import torch\nx = torch.ones(2)\n")
    assert run(["--fix", "--unsafe-fixes", "cuda.py", "plain.py"], tmp_path) == (0, "", (
        "cuda.py: skipped: it does not import torch_xla but looks like CUDA training "
        '(torch.multiprocessing.spawn, init_process_group("nccl"), .cuda()); to port it, run with '
        "--xla-scope=always\n"
        "flake8-xla: fixed 0 findings, 0 remaining, 1 CUDA file skipped (--xla-scope=always ports it)\n"))
    assert (tmp_path / "cuda.py").read_text() == CUDA
    status, _, err = run(["--fix", "--unsafe-fixes", "--xla-scope=always", "cuda.py"], tmp_path)
    assert "skipped" not in err and (tmp_path / "cuda.py").read_text() != CUDA


CUDA_NOTE = ('flake8-xla: note: {who} import torch_xla but look{s} like CUDA training (torch.multiprocessing.spawn, '
             'init_process_group("nccl"), .cuda()): xla-scope = auto lints only XLA code; --xla-scope=always lints '
             '{it} as XLA code (and --fix --unsafe-fixes --xla-scope=always ports {it})\n')


def test_a_silent_cuda_script_gets_one_note_on_stderr(tmp_path, run):
    """A CUDA training script without torch_xla gets no finding in scope auto: the CLI says
    why on stderr, one line per run; stdout and the exit status are the lint's."""
    (tmp_path / "cuda.py").write_text(CUDA)
    (tmp_path / "plain.py").write_text("import torch\nx = torch.ones(2)\n")
    one = CUDA_NOTE.format(who="cuda.py does not", s="s", it="it")
    assert run(["cuda.py", "plain.py"], tmp_path) == (0, "", one)
    assert run(["--format=json", "cuda.py"], tmp_path) == (0, "[]\n", one)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.py").write_text(CUDA)
    (tmp_path / "sub" / "c.py").write_text(CUDA)
    assert run(["cuda.py", "sub"], tmp_path) == (0, "", CUDA_NOTE.format(who="cuda.py and 2 more files do not", s="",
                                                                         it="them"))
    # silent for a file with findings, in scope always, for a plain file, and when asked to record
    (tmp_path / "xla.py").write_text("import torch_xla\n" + CUDA)
    status, out, err = run(["xla.py"], tmp_path)
    assert status == 1 and "XLA002" in out and err == ""
    status, out, err = run(["--xla-scope=always", "cuda.py"], tmp_path)
    assert status == 1 and "XLA401" in out and err == ""
    assert run(["plain.py"], tmp_path) == (0, "", "")
    assert run(["--write-baseline", "b.json", "cuda.py"], tmp_path) == (0, "", "flake8-xla: recorded 0 findings in b.json\n")
    assert run(["--add-noqa", "cuda.py"], tmp_path) == (0, "", "flake8-xla: added noqa codes to 0 lines in 0 files\n")
    # standard input too
    monkeypatch_stdin = io.TextIOWrapper(io.BytesIO(CUDA.encode()))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sys, "stdin", monkeypatch_stdin)
        assert run(["-", "--stdin-filename=t.py"], tmp_path) == (0, "", one.replace("cuda.py", "t.py"))


# --- the README and CI --------------------------------------------------------------------

def test_ci_workflow_runs_ci_run_on_python_3_11():
    yaml = pytest.importorskip("yaml")
    jsonschema = pytest.importorskip("jsonschema")
    pytest.importorskip("check_jsonschema")
    from importlib import resources

    schema_file = resources.files("check_jsonschema.builtin_schemas.vendor") / "github-workflows.json"
    schema = json.loads(schema_file.read_text(encoding="utf-8"))
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "ci.yml").read_text(encoding="utf-8"))
    workflow["on"] = workflow.pop(True)  # YAML 1.1 reads the key `on` as True
    jsonschema.validators.validator_for(schema)(schema).validate(workflow)
    assert set(workflow["on"]) == {"push", "pull_request"}
    (job,) = workflow["jobs"].values()
    assert job["runs-on"] == "ubuntu-latest"
    setup = next(s for s in job["steps"] if s.get("uses", "").startswith("actions/setup-python@"))
    assert setup["with"]["python-version"] == "3.11"
    assert [s["run"] for s in job["steps"] if "run" in s] == [".ci/run"]
    assert os.access(ROOT / ".ci" / "run", os.X_OK)


def test_readme_keeps_the_users_path_first():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    headings = [line for line in text.splitlines() if line.startswith("#")]
    assert headings[:4] == ["# flake8-xla", "## Install", "## Quick start", "## Running the tests"]
    for heading in ("### flake8", "### pylint", "### Standalone CLI (for Ruff users and CI)", "### pre-commit",
                    "### Editors", "### Notebooks", "## Adopting it on existing code"):
        assert heading in headings, heading
    # internals, speed figures and design notes live in docs/
    for moved, where in (("**Names through imports**", "internals.md"), ("| corpus | files / lines |", "benchmarks.md"),
                         ("Releasing: the version lives", "internals.md"), ("Writing is safe:", "fixing.md")):
        assert moved not in text and moved in (ROOT / "docs" / where).read_text(encoding="utf-8")
    assert "about 2.5 to 3 minutes on 2 cores (two pytest-xdist workers" in text and "about 19\nminutes on 2 shared cores" in text
    assert len(text.splitlines()) < 250
