"""Notebooks (.ipynb): the CLI lints their code cells as one module, places each finding in its
cell in every output format, handles magics as Jupyter does, walks folders for them, and
--fix / --diff rewrite only the changed cells, keeping every other byte; the flake8 and pylint
plugins say to run flake8-xla on a notebook instead of passing it; the IPython extension.

The notebooks are made here from handed cases (tests/cases), each split over several cells
with magics, markdown and raw cells put between them."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from flake8_xla import fix as fix_pkg
from flake8_xla import notebook
from flake8_xla.__main__ import main

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "tests" / "cases"
_EXPECT = re.compile(r"#\s*expect(?:\((\w+)\))?:\s*([A-Z0-9 ]+)")


def case_cells(name: str, cuts: list[int]) -> list[str]:
    """The case's text split before each line number of ``cuts`` (1-based)."""
    lines = (CASES / name).read_text(encoding="utf-8").splitlines(keepends=True)
    bounds = [1, *cuts, len(lines) + 1]
    return ["".join(lines[a - 1:b - 1]).rstrip("\n") for a, b in zip(bounds, bounds[1:])]


def expected(name: str) -> set[tuple[int, str]]:
    """(line, code) of each `# expect:` of the case (every variant)."""
    out = set()
    for n, line in enumerate((CASES / name).read_text(encoding="utf-8").splitlines(), 1):
        m = _EXPECT.search(line)
        if m and m.group(1) in (None, "default"):
            out |= {(n, code) for code in m.group(2).split()}
    return out


def build(cells, path: Path, **write) -> Path:
    """A notebook of ``cells``: ("code" | "markdown" | "raw", text) pairs, written by nbformat
    (its layout: indent 1, sorted keys, cell ids, a trailing newline) unless ``write`` says
    how to dump it with json."""
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "python3", "language": "python",
                                                           "display_name": "Python 3"}})
    makers = {"code": nbformat.v4.new_code_cell, "markdown": nbformat.v4.new_markdown_cell,
              "raw": nbformat.v4.new_raw_cell}
    for n, (kind, text) in enumerate(cells):
        cell = makers[kind](text)
        cell["id"] = f"cell-{n}"
        nb.cells.append(cell)
    if write:
        trailing = write.pop("trailing", "\n")
        string_source = write.pop("string_source", False)
        data = json.loads(nbformat.writes(nb))
        if string_source:
            for c in data["cells"]:
                c["source"] = "".join(c["source"])
        path.write_text(json.dumps(data, **write) + trailing, encoding="utf-8")
    else:
        nbformat.write(nb, str(path))
    return path


# ddp_flags.py: imports (1-9) | worker (10-25) | main guard (26-)
DDP_CELLS = case_cells("ddp_flags.py", [10, 26])


def ddp_notebook(path: Path, **write) -> Path:
    return build([
        ("markdown", "# DDP on TPU\n`model = DDP(net)` here is prose, not code"),
        ("code", "!pip install torch_xla\n%pip install -q accelerate\nfiles = !ls"),
        ("code", DDP_CELLS[0]),
        ("raw", "model = DDP(net)"),
        ("code", DDP_CELLS[1]),
        ("code", "%%time\n" + DDP_CELLS[2]),
        ("code", "%%bash\nmodel = DDP(net)\n"),
    ], path, **write)


def ddp_positions() -> set[tuple[int, int, str]]:
    """(cell, line in cell, code) of the case's expectations in the notebook above: cell 5
    holds case lines 10-25."""
    return {(5, line - 9, code) for line, code in expected("ddp_flags.py")}


def run_cli(args, cwd, monkeypatch, capsys):
    monkeypatch.chdir(cwd)
    status = main([str(a) for a in args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


DDP_DEFAULT = [
    "ddp.ipynb:cell 5:7:17: XLA101 DDP on XLA without gradient_as_bucket_view=True; pass gradient_as_bucket_view=True",
    "ddp.ipynb:cell 5:9:17: XLA102 DDP on XLA given device_ids/output_device (CUDA-only); drop them and call "
    "model.to(torch_xla.device())",
    "ddp.ipynb:cell 5:11:17: XLA101 DDP on XLA without gradient_as_bucket_view=True; pass gradient_as_bucket_view=True",
]


def test_case_split_over_cells_default_format(tmp_path, monkeypatch, capsys):
    """The case's findings, on their cells and lines (magics, a %%time cell, markdown, raw
    and %%bash cells around them): DDP is imported in cell 3 and used in cell 5."""
    ddp_notebook(tmp_path / "ddp.ipynb")
    status, out, err = run_cli(["ddp.ipynb"], tmp_path, monkeypatch, capsys)
    assert (status, err) == (1, "")
    assert out.splitlines() == DDP_DEFAULT
    got = {(int(c), int(l_), code) for c, l_, code in re.findall(r"cell (\d+):(\d+):\d+: (\w+)", out)}
    assert got == ddp_positions()


def test_case_positions_in_json_github_and_sarif(tmp_path, monkeypatch, capsys):
    path = ddp_notebook(tmp_path / "ddp.ipynb")
    raw = path.read_text(encoding="utf-8").splitlines()
    _, out, _ = run_cli(["--format=json", "ddp.ipynb"], tmp_path, monkeypatch, capsys)
    data = json.loads(out)
    assert [(d["cell"], d["line"], d["col"], d["end_line"], d["end_col"], d["code"]) for d in data] == [
        (5, 7, 17, 7, 25, "XLA101"), (5, 9, 17, 9, 74, "XLA102"), (5, 11, 17, 11, 88, "XLA101")]

    _, out, _ = run_cli(["--format=github", "ddp.ipynb"], tmp_path, monkeypatch, capsys)
    found = re.findall(r"^::error file=ddp\.ipynb,line=(\d+),col=(\d+),title=(\w+)::cell (\d+):(\d+):(\d+): ", out, re.M)
    assert [(int(a), int(b), c, int(d), int(e), int(f)) for a, b, c, d, e, f in found] == [
        (62, 22, "XLA101", 5, 7, 17), (64, 22, "XLA102", 5, 9, 17), (66, 22, "XLA101", 5, 11, 17)]
    # the annotation's line and column are where the finding's code is in the file's text
    assert raw[61][21:].startswith("DDP(net)  # expect: XLA101")
    assert raw[63][21:].startswith("DDP(net, device_ids=[rank]")
    assert raw[65][21:].startswith("torch.nn.parallel.DistributedDataParallel(")

    _, out, _ = run_cli(["--format=sarif", "ddp.ipynb"], tmp_path, monkeypatch, capsys)
    results = json.loads(out)["runs"][0]["results"]
    assert [(r["ruleId"], r["locations"][0]["physicalLocation"]["region"], r["properties"],
             r["message"]["text"].split(" XLA")[0]) for r in results] == [
        ("XLA101", {"startLine": 62, "startColumn": 22, "endLine": 62, "endColumn": 30},
         {"cell": 5, "cellLine": 7, "cellColumn": 17}, "cell 5:7:17:"),
        ("XLA102", {"startLine": 64, "startColumn": 22, "endLine": 64, "endColumn": 79},
         {"cell": 5, "cellLine": 9, "cellColumn": 17}, "cell 5:9:17:"),
        ("XLA101", {"startLine": 66, "startColumn": 22, "endLine": 66, "endColumn": 93},
         {"cell": 5, "cellLine": 11, "cellColumn": 17}, "cell 5:11:17:"),
    ]
    assert raw[61][21:29] == "DDP(net)"  # the SARIF region: startColumn 22 to endColumn 30 (exclusive)


def test_sarif_is_valid_with_notebook_results(tmp_path, monkeypatch, capsys):
    jsonschema = pytest.importorskip("jsonschema")
    ddp_notebook(tmp_path / "ddp.ipynb")
    _, out, _ = run_cli(["--format=sarif", "ddp.ipynb"], tmp_path, monkeypatch, capsys)
    schema = json.loads((ROOT / "tests" / "data" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    jsonschema.validate(json.loads(out), schema)


# host_sync_item.py: imports (1-7) | train_epoch (8-23) | train_epoch_fixed (24-)
HOST_CELLS = case_cells("host_sync_item.py", [8, 24])


def test_second_case_with_line_magics_inside_the_cell(tmp_path, monkeypatch, capsys):
    """Magics inside the cell (a %time line magic, a shell escape inside the loop) leave the
    other lines where they are; the %%capture cell magic runs its body as Python."""
    body = HOST_CELLS[1].splitlines()
    # after "running, hits, seen = 0.0, 0, 0" (cell line 4): an escape in the loop's body
    body.insert(5, "        !echo step")
    build([("code", HOST_CELLS[0] + "\n%env XLA_USE_BF16=0"), ("markdown", "## the epoch"),
           ("code", "%%capture\n" + "\n".join(body)), ("code", HOST_CELLS[2])], tmp_path / "host.ipynb")
    _, out, _ = run_cli(["host.ipynb"], tmp_path, monkeypatch, capsys)
    got = [tuple(map(int, m[:3])) + (m[3],) for m in re.findall(r"cell (\d+):(\d+):(\d+): (\w+)", out)]
    # case line n of train_epoch is cell line n - 8 + 1, +1 for %%capture, +1 after the escape
    want = sorted((3, n - 8 + 1 + 1 + (1 if n >= 13 else 0), code) for n, code in expected("host_sync_item.py"))
    assert sorted((c, line, code) for c, line, _, code in got) == want
    assert "E999" not in out


def test_noqa_per_line_and_cells_are_one_module(tmp_path, monkeypatch, capsys):
    build([("code", "import torch_xla.core.xla_model as xm"),
           ("code", "def world():\n    return xm.xrt_world_size()"),
           ("code", "n = xm.xrt_world_size()  # noqa: XLA801\nm = xm.get_ordinal()")], tmp_path / "nb.ipynb")
    _, out, _ = run_cli(["nb.ipynb"], tmp_path, monkeypatch, capsys)
    assert [line.split(" ")[0:3] for line in out.splitlines()] == [
        ["nb.ipynb:cell", "2:2:12:", "XLA801"], ["nb.ipynb:cell", "3:2:5:", "XLA802"]]


def test_markdown_raw_and_foreign_cell_magics_are_skipped(tmp_path, monkeypatch, capsys):
    code = "import torch_xla.core.xla_model as xm\nxm.mark_step()"
    build([("markdown", code), ("raw", code), ("code", "%%bash\n" + code), ("code", "%%writefile x.py\n" + code)],
          tmp_path / "nb.ipynb")
    assert run_cli(["nb.ipynb"], tmp_path, monkeypatch, capsys) == (0, "", "")


def test_not_python_kernel_and_not_a_notebook(tmp_path, monkeypatch, capsys):
    nb = nbformat.v4.new_notebook(metadata={"language_info": {"name": "R"}})
    nb.cells.append(nbformat.v4.new_code_cell("import torch_xla.core.xla_model as xm\nxm.mark_step()"))
    nbformat.write(nb, str(tmp_path / "r.ipynb"))
    (tmp_path / "bad.ipynb").write_text("{not json", encoding="utf-8")
    status, out, _ = run_cli(["r.ipynb", "bad.ipynb"], tmp_path, monkeypatch, capsys)
    assert status == 1
    assert out.startswith("bad.ipynb:1:1: E902 not a notebook: ") and out.count("\n") == 1


def test_syntax_error_in_a_cell_is_placed_in_it(tmp_path, monkeypatch, capsys):
    build([("code", "import torch_xla"), ("code", "x = 1\ndef f(:\n    pass")], tmp_path / "nb.ipynb")
    _, out, _ = run_cli(["nb.ipynb"], tmp_path, monkeypatch, capsys)
    assert out == "nb.ipynb:cell 2:2:8: E999 SyntaxError: invalid syntax\n"  # flake8's column, as in a .py file


def test_stdin_named_as_notebook(tmp_path, monkeypatch, capsys):
    path = ddp_notebook(tmp_path / "ddp.ipynb")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(path.read_bytes()), encoding="utf-8"))
    _, out, _ = run_cli(["-", "--stdin-filename", "ddp.ipynb"], tmp_path, monkeypatch, capsys)
    assert out.splitlines() == DDP_DEFAULT


def test_stdin_named_as_notebook_holding_python(tmp_path, monkeypatch, capsys):
    """An editor sending a notebook's cells as Python under its name: linted as a module."""
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"import torch_xla.core.xla_model as xm\n"
                                                                  b"xm.mark_step()\n"), encoding="utf-8"))
    _, out, _ = run_cli(["-", "--stdin-filename", "nb.ipynb"], tmp_path, monkeypatch, capsys)
    assert out == "nb.ipynb:2:1: XLA805 xm.mark_step is deprecated since torch_xla 2.8; use torch_xla.sync()\n"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"import torch_xla.core.xla_model as xm\n"
                                                                  b"xm.mark_step()\n"), encoding="utf-8"))
    status, out, err = run_cli(["--fix", "-", "--stdin-filename", "nb.ipynb"], tmp_path, monkeypatch, capsys)
    assert (status, out, err) == (0, "import torch_xla\ntorch_xla.sync()\n", "flake8-xla: fixed 1 finding, 0 remaining\n")


def test_folders_walk_notebooks_with_excludes_and_gitignore(tmp_path, monkeypatch, capsys):
    bad = [("code", "import torch_xla.core.xla_model as xm\nxm.mark_step()")]
    for rel in ("a/nb.ipynb", "a/.ipynb_checkpoints/nb-checkpoint.ipynb", "a/ignored/x.ipynb", "a/skip.ipynb"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        build(bad, tmp_path / rel)
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("ignored/\n", encoding="utf-8")
    _, out, _ = run_cli(["--extend-exclude=skip.ipynb", "a"], tmp_path, monkeypatch, capsys)
    assert out.splitlines() == ["a/nb.ipynb:cell 1:2:1: XLA805 xm.mark_step is deprecated since torch_xla 2.8; "
                                "use torch_xla.sync()"]


# ---- magics ----

@pytest.mark.parametrize("ipython", [True, False], ids=["ipython", "fallback"])
def test_cell_python_keeps_one_line_per_line(ipython):
    transformer = "auto" if ipython else None
    src = "%pip install x\nfiles = !ls\nfor f in files:\n    !echo {f}\n    print(f)\n"
    lines, magic, shift = notebook.cell_python(src, transformer)
    if ipython:
        assert lines == ["get_ipython().run_line_magic('pip', 'install x')\n", "files = get_ipython().getoutput('ls')\n",
                         "for f in files:\n", "    get_ipython().system('echo {f}')\n", "    print(f)\n"]
    else:
        assert lines == ["...           \n", "files = ...\n", "for f in files:\n", "    ...      \n", "    print(f)\n"]
    assert magic == {0, 1, 3} and shift == [0] * 5
    assert notebook.cell_python("%%time\nx = 1", transformer)[0] == ["#%time\n", "x = 1\n"]
    assert notebook.cell_python("%%bash\necho hi\n", transformer) is None


def test_fallback_without_ipython_lints_the_same(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(notebook, "_transformer", lambda: None)
    ddp_notebook(tmp_path / "ddp.ipynb")
    _, out, _ = run_cli(["ddp.ipynb"], tmp_path, monkeypatch, capsys)
    assert out.splitlines() == DDP_DEFAULT


def test_without_nbformat_json_reads_version_4_and_names_the_extra_for_3(tmp_path, monkeypatch, capsys):
    ddp_notebook(tmp_path / "ddp.ipynb")
    v3 = nbformat.v3
    old = v3.new_notebook(worksheets=[v3.new_worksheet(cells=[
        v3.new_text_cell("markdown", source="# v3"),
        v3.new_code_cell(input="import torch_xla.core.xla_model as xm\nxm.mark_step()")])])
    nbformat.write(old, str(tmp_path / "old.ipynb"), version=3)
    _, with_nbformat, _ = run_cli(["old.ipynb"], tmp_path, monkeypatch, capsys)
    assert with_nbformat.startswith("old.ipynb:cell 2:2:1: XLA805 ")
    monkeypatch.setitem(sys.modules, "nbformat", None)
    _, out, _ = run_cli(["ddp.ipynb", "old.ipynb"], tmp_path, monkeypatch, capsys)
    assert out.splitlines() == DDP_DEFAULT + [
        "old.ipynb:1:1: E902 not a notebook: nbformat 3 notebook: reading it needs nbformat "
        "(pip install 'flake8-xla[notebook]')"]


# ---- --fix and --diff ----

FIXED_LINES = {
    "        model = DDP(net)  # expect: XLA101":
        "        model = DDP(net, gradient_as_bucket_view=True)  # expect: XLA101",
    "        model = DDP(net, device_ids=[rank], gradient_as_bucket_view=True)  # expect: XLA102":
        "        model = DDP(net, gradient_as_bucket_view=True)  # expect: XLA102",
    "        model = torch.nn.parallel.DistributedDataParallel(net, broadcast_buffers=False)  # expect: XLA101":
        "        model = torch.nn.parallel.DistributedDataParallel(net, broadcast_buffers=False, "
        "gradient_as_bucket_view=True)  # expect: XLA101",
}


def with_outputs(path: Path) -> bytes:
    """The notebook with outputs, an execution count, metadata and a non-ASCII markdown cell,
    as Jupyter writes them (nbformat's layout)."""
    nb = nbformat.read(str(path), as_version=4)
    nb.cells[4].outputs = [nbformat.v4.new_output("stream", text="épreuve 1\n")]
    nb.cells[4].execution_count = 7
    nb.cells[4].metadata["tags"] = ["train"]
    nb.cells[0].source += "\nnaïve"
    nbformat.write(nb, str(path))
    return path.read_bytes()


@pytest.mark.parametrize("layout", [
    {}, {"indent": 2, "ensure_ascii": True, "trailing": ""},
    {"indent": 4, "sort_keys": False, "string_source": True}], ids=["nbformat", "indent2-ascii-no-newline", "string-source"])
def test_fix_rewrites_only_the_changed_cell(tmp_path, monkeypatch, capsys, layout):
    """--fix changes the three lines of cell 5 and no other byte: outputs, metadata, ids,
    the other cells, indentation, key order, escapes and the final newline are as they were;
    the file is written by the fix package's atomic writer."""
    path = ddp_notebook(tmp_path / "ddp.ipynb")
    before = with_outputs(path)
    if layout:
        ddp_json = json.loads(before)
        layout = dict(layout)
        trailing = layout.pop("trailing", "\n")
        if layout.pop("string_source", False):
            for c in ddp_json["cells"]:
                c["source"] = "".join(c["source"])
        before = (json.dumps(ddp_json, **layout) + trailing).encode("utf-8")
        path.write_bytes(before)
    text = before.decode("utf-8")
    ascii_only = "\\u00e9" in text
    want = text
    for old, new in FIXED_LINES.items():
        old_json, new_json = (json.dumps(s + "\n", ensure_ascii=ascii_only)[1:-1] for s in (old, new))
        assert want.count(old_json) == 1
        want = want.replace(old_json, new_json)
    assert want != text
    written = []
    real_writer = fix_pkg.write_atomic
    monkeypatch.setattr(fix_pkg, "write_atomic", lambda *a: (written.append(a[0]), real_writer(*a)))
    status, out, err = run_cli(["--fix", "ddp.ipynb"], tmp_path, monkeypatch, capsys)
    assert (status, out) == (0, "")
    assert err == "flake8-xla: fixed 3 findings, 0 remaining\n"
    assert path.read_bytes() == want.encode("utf-8")
    assert written == [path.resolve()]
    # and again: nothing left to fix, not a byte changes
    assert run_cli(["--fix", "ddp.ipynb"], tmp_path, monkeypatch, capsys)[0] == 0
    assert path.read_bytes() == want.encode("utf-8")


def test_diff_shows_the_changed_cell_and_writes_nothing(tmp_path, monkeypatch, capsys):
    path = ddp_notebook(tmp_path / "ddp.ipynb")
    before = path.read_bytes()
    status, out, err = run_cli(["--diff", "ddp.ipynb"], tmp_path, monkeypatch, capsys)
    assert status == 1 and path.read_bytes() == before
    assert err == "flake8-xla: would fix 3 findings, 0 would remain\n"
    assert out.splitlines()[:3] == ["--- ddp.ipynb:cell 5", "+++ ddp.ipynb:cell 5", "@@ -4,11 +4,11 @@"]
    assert [line[1:] for line in out.splitlines() if line.startswith("+") and not line.startswith("+++")] == \
        list(FIXED_LINES.values())


def test_fix_adds_an_import_to_the_first_cell_and_keeps_magics(tmp_path, monkeypatch, capsys):
    path = build([("code", "%pip install torch_xla\nimport torch_xla.core.xla_model as xm"),
                  ("markdown", "the size"),
                  ("code", "!nproc\nn = xm.xrt_world_size()\nx = !ls")], tmp_path / "nb.ipynb")
    status, out, err = run_cli(["--fix", "nb.ipynb"], tmp_path, monkeypatch, capsys)
    assert (status, out, err) == (0, "", "flake8-xla: fixed 1 finding, 0 remaining\n")
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    assert ["".join(c["source"]) for c in cells] == [
        # the fixer puts a new import before the module's first statement (here a magic)
        # and drops the one it left unused
        "import torch_xla.runtime as xr\n%pip install torch_xla",
        "the size",
        "!nproc\nn = xr.world_size()\nx = !ls",
    ]


def test_fix_stdin_notebook(tmp_path, monkeypatch, capsys):
    path = ddp_notebook(tmp_path / "ddp.ipynb")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(path.read_bytes()), encoding="utf-8"))
    status, out, err = run_cli(["--fix", "-", "--stdin-filename", "ddp.ipynb"], tmp_path, monkeypatch, capsys)
    assert status == 0 and err == "flake8-xla: fixed 3 findings, 0 remaining\n"
    assert json.loads(out)["cells"][4]["source"][6] == list(FIXED_LINES.values())[0] + "\n"


def test_apply_refuses_a_change_to_a_magic_line():
    nb = notebook.parse(json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": ["!ls\n", "x = 1"]}]}))
    with pytest.raises(notebook.NotebookError, match="magic"):
        nb.apply("y = 2\nx = 1\n")
    assert nb.apply("get_ipython().system('ls')\nx = 2\n")[1][0][1] == "!ls\nx = 2"


def test_apply_splits_a_change_that_spans_cells():
    """A fix's changed block over two cells with fewer lines after it: each new line goes to
    the cell of the old line it rewrites (the most similar, in order)."""
    nb = notebook.parse(json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "code", "id": "a", "metadata": {}, "outputs": [], "execution_count": None,
         "source": ["import torch_xla.core.xla_model as xm"]},
        {"cell_type": "code", "id": "b", "metadata": {}, "outputs": [], "execution_count": None,
         "source": ["xm.mark_step()\n", "import torch_xla.core.xla_model as xm"]}]}))
    text, changed = nb.apply("import torch_xla\ntorch_xla.sync()\n")
    assert [(cell.index, source) for cell, source in changed] == [(1, "import torch_xla"), (2, "torch_xla.sync()")]
    assert [c["source"] for c in json.loads(text)["cells"]] == [["import torch_xla"], ["torch_xla.sync()"]]


def test_apply_is_not_quadratic_in_repeated_lines():
    """1000 cells each with the same escape line and one fixed line: the fixed module goes
    back into the cells in well under a second (difflib over the whole module took 45 s)."""
    import time

    cells = [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
              "source": [f"x{i} = 1\n", "!pip install -q torch_xla\n", "xm.mark_step()"]} for i in range(1000)]
    nb = notebook.parse(json.dumps({"nbformat": 4, "nbformat_minor": 4, "metadata": {}, "cells": cells}, indent=1))
    fixed = "".join(nb.module_lines()).replace("xm.mark_step()", "torch_xla.sync()")
    start = time.perf_counter()
    text, changed = nb.apply(fixed)
    assert time.perf_counter() - start < 10
    assert len(changed) == 1000 and text.count('"torch_xla.sync()"') == 1000


# ---- the flake8 and pylint plugins ----

def test_flake8_names_flake8_xla_on_a_notebook(tmp_path):
    ddp_notebook(tmp_path / "ddp.ipynb")
    proc = subprocess.run([sys.executable, "-m", "flake8", "--isolated", "--select=XLA,E9", "ddp.ipynb"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert proc.returncode == 1
    assert proc.stdout == ("ddp.ipynb:1:1: XLA099 flake8 does not lint notebooks; run flake8-xla ddp.ipynb "
                           "(or nbqa flake8_xla ddp.ipynb)\n")


def test_flake8_lints_python_sent_under_a_notebook_name(tmp_path):
    """An editor's flake8 extension (or flake8-nb) sends the cells' Python with the notebook's
    name: that is linted as any module, not answered with XLA099."""
    proc = subprocess.run([sys.executable, "-m", "flake8", "--isolated", "--select=XLA,E9",
                           "--stdin-display-name=ddp.ipynb", "-"], input="import torch_xla.core.xla_model as xm\n"
                          "xm.mark_step()\n", capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert proc.stdout == ("ddp.ipynb:2:1: XLA805 xm.mark_step is deprecated since torch_xla 2.8; "
                           "use torch_xla.sync()\n")


def test_pylint_names_flake8_xla_on_a_notebook(tmp_path):
    ddp_notebook(tmp_path / "ddp.ipynb")
    proc = subprocess.run([sys.executable, "-m", "pylint", "--load-plugins=flake8_xla.pylint_plugin",
                           "--disable=all", "--enable=xla", "--score=n", "ddp.ipynb"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert [line for line in proc.stdout.splitlines() if not line.startswith("*")] == [
        "ddp.ipynb:1:0: F7099: XLA099 pylint does not lint notebooks; run flake8-xla ddp.ipynb "
        "(or nbqa flake8_xla ddp.ipynb) (xla-notebook-not-linted)"]
    assert proc.returncode & 1  # pylint's "fatal message issued" bit


def test_pre_commit_hook_passes_notebooks():
    import yaml

    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert hook["types_or"] == ["python", "jupyter"] and "types" not in hook


@pytest.mark.slow
def test_pre_commit_try_repo_lints_a_staged_notebook(tmp_path):
    """Real `pre-commit try-repo` passes a staged notebook to the hook, which reports the
    finding in its cell."""
    import os
    import shutil

    if shutil.which("git") is None:
        pytest.skip("git needed")
    repo = tmp_path / "user"
    repo.mkdir()
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "cache"), "GIT_AUTHOR_NAME": "t",
           "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True, env=env)
    ddp_notebook(repo / "ddp.ipynb")
    subprocess.run(["git", "add", "ddp.ipynb"], cwd=repo, check=True, env=env)
    proc = subprocess.run([sys.executable, "-m", "pre_commit", "try-repo", str(ROOT), "flake8-xla", "--all-files"],
                          cwd=repo, capture_output=True, text=True, timeout=900, env=env)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert DDP_DEFAULT[0] in out, out


# ---- the IPython extension ----

SESSION = r'''
import sys
sys.modules["libcst"] = None      # the base install: no LibCST,
sys.modules["nbformat"] = None    # no nbformat
from IPython.core.interactiveshell import InteractiveShell

shell = InteractiveShell.instance()
def run(cell):
    print("-- " + cell.splitlines()[0])
    shell.run_cell(cell, store_history=True)

run("%load_ext flake8_xla")
run("import torch_xla.core.xla_model as xm\nfrom torch.nn.parallel import DistributedDataParallel as DDP")
run("!echo shell escape\nsize = 8")
run("def wrap(net):\n    %time pass\n    return DDP(net)")
run("def broken(:")
run("%xla_lint")
run("%xla_lint --on")
run("def world():\n    return xm.xrt_world_size()\nran = 'yes'")
run("print(ran)")
run("%%xla_lint\ny = 1\nxm.mark_step()")
run("%xla_lint --off")
run("def rank():\n    return xm.get_ordinal()")
from flake8_xla.ipython import XlaLint
run("%xla_lint --on")
XlaLint.findings = lambda *a, **k: 1 / 0
run("still = 'runs'\nprint(still)")
assert "libcst" not in sys.modules or sys.modules["libcst"] is None
'''


def test_ipython_extension_in_a_real_shell(tmp_path):
    """The magics and the pre_run_cell check in a real InteractiveShell, with neither LibCST
    nor nbformat importable: findings one line each with the cell's execution count, the
    checked cell still runs, and a failing check does not stop it."""
    pytest.importorskip("IPython")
    env = {"IPYTHONDIR": str(tmp_path / "ipython"), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-c", SESSION], capture_output=True, text=True, cwd=tmp_path,
                          timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr
    out = re.sub(r"\x1b\[[0-9;]*m", "", proc.stdout)
    out = "\n".join(line for line in out.splitlines() if not line.startswith(("CPU times", "Wall time")))
    lines = out.split("-- def broken(:")[1].splitlines()
    assert lines[lines.index("-- %xla_lint"):] == [
        "-- %xla_lint",
        "cell [4]:3:12: XLA101 DDP on XLA without gradient_as_bucket_view=True; pass gradient_as_bucket_view=True",
        "-- %xla_lint --on",
        "flake8-xla: check before each cell on",
        "-- def world():",
        "cell [8]:2:12: XLA801 xm.xrt_world_size was removed in torch_xla 2.7; use xr.world_size()",
        "-- print(ran)",
        "yes",
        "-- %%xla_lint",
        "cell [10]:2:1: XLA805 xm.mark_step is deprecated since torch_xla 2.8; use torch_xla.sync()",
        "-- %xla_lint --off",
        "flake8-xla: check before each cell off",
        "-- def rank():",
        "-- %xla_lint --on",
        "flake8-xla: check before each cell on",
        "-- still = 'runs'",
        "flake8-xla: the check failed (ZeroDivisionError); the cell runs as usual",
        "runs",
    ]
    assert "shell escape" in out


# ---- robustness: any notebook-shaped JSON lints without an exception ----

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

FRAGMENTS = ["import torch_xla.core.xla_model as xm", "xm.mark_step()", "%pip install x", "!ls", "x = !ls", "%%time",
             "%%bash", "    !echo \\", "def f(:", "obj?", "  indented = 1", ">>> a = 1", "é = '\\ud83d'", "# noqa",
             "'''", "\\", "\r", "\t", "", "In [1]: y = 2", "%%", "%", "?", "😀 = 1"]
_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
                     max_leaves=6)
_SOURCE = st.lists(st.sampled_from(FRAGMENTS), max_size=6).map("\n".join)
_CELL = st.fixed_dictionaries({"cell_type": st.sampled_from(["code", "markdown", "raw", "other"])}, optional={
    "source": _SOURCE | st.lists(_SOURCE, max_size=3) | _JSON, "metadata": _JSON, "outputs": _JSON, "id": _JSON})
_NOTEBOOK = st.fixed_dictionaries({"cells": st.lists(_CELL, max_size=4)}, optional={
    "nbformat": st.sampled_from([4, 3, 5, "4"]), "nbformat_minor": st.integers(0, 5), "metadata": _JSON,
    "worksheets": _JSON}) | _JSON


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(nb=_NOTEBOOK, indent=st.sampled_from([None, 1, 2]), ascii_only=st.booleans(), nbformat_present=st.booleans())
def test_any_notebook_shaped_json_lints_and_round_trips(nb, indent, ascii_only, nbformat_present):
    from flake8_xla.cli.files import lint_notebook
    from flake8_xla.settings import Settings

    text = json.dumps(nb, indent=indent, ensure_ascii=ascii_only)
    saved = sys.modules.get("nbformat")
    if not nbformat_present:
        sys.modules["nbformat"] = None
    try:
        results = lint_notebook("nb.ipynb", Settings(), text)
        try:
            parsed = fix_pkg._NotebookFix(text)
        except fix_pkg.NotFixed:
            parsed = None
    finally:
        sys.modules["nbformat"] = saved
    for r in results:
        assert r.line >= 1 and r.col >= 1
        if r.cell is not None and r.raw is not None:
            assert 1 <= r.raw[0] <= text.count("\n") + 1
    if parsed is not None:  # nothing fixed: not a byte changes
        assert parsed.apply(parsed.module, "nb.ipynb") == (text, "")
        assert parsed.nb.with_sources([]) == text
        assert parsed.nb.with_sources([(c, c.source) for c in parsed.nb.cells if c.span]) == text


_FIXABLE = ["import torch_xla.core.xla_model as xm", "xm.mark_step()", "n = xm.xrt_world_size()", "%pip install x",
            "!ls", "x = !ls", "%%time", "if n:", "    xm.mark_step()", "    !echo", "", "é = 1  # noqa"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cells=st.lists(st.tuples(st.sampled_from(["code", "code", "markdown"]),
                                st.lists(st.sampled_from(_FIXABLE), max_size=5).map("\n".join)), min_size=1, max_size=4),
       indent=st.sampled_from([1, 2]))
def test_fixed_notebooks_keep_everything_but_code_cells(tmp_path_factory, cells, indent):
    """Fixing any mix of cells changes only code cells' sources: the rest of the JSON is
    equal, markdown untouched, magics kept, and the fixed notebook still parses."""
    from flake8_xla.fix import fixer
    from flake8_xla.settings import Settings

    cells = [("code", "import torch_xla.core.xla_model as xm")] + cells
    path = build(cells, tmp_path_factory.mktemp("nb") / "nb.ipynb", indent=indent)
    text = path.read_text(encoding="utf-8")
    try:
        parsed = fix_pkg._NotebookFix(text)
        result = fixer.fix_source(parsed.module, Settings(), path="nb.ipynb")
        new_text, _ = parsed.apply(result.source, "nb.ipynb")
    except fix_pkg.NotFixed:
        return
    old, new = json.loads(text), json.loads(new_text)
    for a, b in zip(old["cells"], new["cells"]):
        if a["cell_type"] != "code":
            assert a == b
        else:
            assert {k: v for k, v in a.items() if k != "source"} == {k: v for k, v in b.items() if k != "source"}
            magics = [line for line in "".join(a["source"]).splitlines() if line.lstrip().startswith(("%", "!"))
                      or "= !" in line]
            kept = "".join(b["source"]).splitlines()
            assert all(line in kept for line in magics)
    assert {k: v for k, v in old.items() if k != "cells"} == {k: v for k, v in new.items() if k != "cells"}
    assert len(old["cells"]) == len(new["cells"])
    notebook.parse(new_text)
