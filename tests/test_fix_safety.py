"""The fixer never loses or misplaces a byte (issue 22): LibCST's round trip is checked
before any edit, lines are counted as Python counts them, and the comments of a deleted
statement stay. Each test compares the exact output text.
"""

from __future__ import annotations

import pytest

pytest.importorskip("libcst")

import libcst as cst  # noqa: E402

from flake8_xla.fix import fixer  # noqa: E402
from flake8_xla.lines import split_lines, universal_lines  # noqa: E402
from flake8_xla.settings import build  # noqa: E402

AUTO = build()
ALWAYS = build("always", None)
XM = "import torch_xla.core.xla_model as xm\n"
XR = "import torch_xla.runtime as xr\n"
CALL, FIXED = "n = xm.xrt_world_size()", "n = xr.world_size()"


def _fix(source, settings=AUTO, unsafe=False):
    return fixer.fix_source(source, settings, unsafe=unsafe)


# -- 1. round trip: LibCST's own losses at the end of a file are kept, the rest refused ------

# each shape: LibCST alone gives back fewer bytes than it read (checked below, so a LibCST
# that stops losing them shows here), and the fixer keeps every one of them
LIBCST_LOSES = {
    # comment lines after an indented block, indented less than it, at the end of the file
    "comments after a block": (XM + CALL + "\nif n:\n    pass\n  # half\n  # way\n",
                               XR + FIXED + "\nif n:\n    pass\n  # half\n  # way\n"),
    # a file with \r line ends only: LibCST drops the final one
    "CR only": (XM.replace("\n", "\r") + "\r" + CALL + "\rdef f():\r    return n\r",
                XR.replace("\n", "\r") + "\r" + FIXED + "\rdef f():\r    return n\r"),
    # mixed line ends ending in \r
    "mixed ends": (XM + CALL + "\r\nx = 1\r", XR + FIXED + "\r\nx = 1\r"),
    # a blank line before a whitespace-only last line
    "trailing blank lines": (XM + CALL + "\n\n\t\n", XR + FIXED + "\n\n\t\n"),
    "blank lines after a block": (XM + CALL + "\ndef f():\n    return 1\n\n  \n",
                                  XR + FIXED + "\ndef f():\n    return 1\n\n  \n"),
}


@pytest.mark.parametrize("name", sorted(LIBCST_LOSES))
def test_bytes_libcst_drops_at_the_end_are_kept(name):
    source, expected = LIBCST_LOSES[name]
    assert cst.parse_module(source).code != source  # the LibCST bug this guards against
    result = _fix(source)
    assert (result.source, result.fixed, result.reverted) == (expected, 1, None)


@pytest.mark.parametrize("source, expected", [
    # what LibCST round-trips stays byte for byte too: trailing comments, no final newline, CRLF
    (XM + CALL + "\ndef f():\n    return 1\n    # inner\n# outer",
     XR + FIXED + "\ndef f():\n    return 1\n    # inner\n# outer"),
    (XM.replace("\n", "\r\n") + CALL + "\r\n\r\n", XR.replace("\n", "\r\n") + FIXED + "\r\n\r\n"),
    (XM + CALL, XR + FIXED),
])
def test_what_libcst_round_trips_is_kept(source, expected):
    assert _fix(source).source == expected


def test_a_file_libcst_cannot_round_trip_is_refused():
    # a lone backslash line in the middle: ast takes it, LibCST gives back other bytes
    source = XM + "def f():\n    return 1\n\\\n" + CALL + "\n"
    assert cst.parse_module(source).code != source
    result = _fix(source)
    assert (result.source, result.fixed, result.remaining, result.reverted) == \
        (source, 0, 1, "LibCST does not round-trip this file")
    assert [(f.line, f.col, f.code) for f in result.findings] == [(5, 4, "XLA801")]


def test_parse_exact_keeps_the_tail_apart():
    module, tail = fixer.parse_exact("x = 1\r# c\r\r")
    assert (module.code, tail) == ("x = 1", "\r# c\r\r")
    module, tail = fixer.parse_exact("x = 1\n")  # round-trips whole: nothing apart
    assert (module.code, tail) == ("x = 1\n", "")
    assert fixer.parse_exact("x = 1\n\\\ny = 2\n") is None


# -- 2. lines as Python sees them --------------------------------------------------------

def test_split_lines_breaks_only_where_python_does():
    text = "a\x0cb\x0bc\x1cd\x1de\x1ef\x85g\u2028h\u2029i\r\nj\rk\nl"
    assert split_lines(text) == ["a\x0cb\x0bc\x1cd\x1de\x1ef\x85g\u2028h\u2029i\r\n", "j\r", "k\n", "l"]
    assert split_lines("") == [] and split_lines("\n\n") == ["\n", "\n"]
    # flake8's view: the same lines, each end turned into \n
    assert universal_lines(text) == ["a\x0cb\x0bc\x1cd\x1de\x1ef\x85g\u2028h\u2029i\n", "j\n", "k\n", "l"]


@pytest.mark.parametrize("odd", ["\x0c", "\u2028", "\x85", "\x1e"])
def test_noqa_after_an_odd_line_break_character(odd):
    # the character in a comment above: the suppressed line stays, the next one is fixed
    source = XM + f"# a {odd} b\n" + "a = xm.xrt_world_size()  # noqa: XLA801\n" + CALL + "\n"
    result = _fix(source)
    assert result.source == XM + XR + f"# a {odd} b\n" + "a = xm.xrt_world_size()  # noqa: XLA801\n" + FIXED + "\n"
    assert (result.fixed, result.remaining) == (1, 0)


def test_noqa_after_a_line_separator_in_a_string():
    source = XM + 's = "x\u2028y"\n' + "a = xm.xrt_world_size()  # noqa\n" + CALL + "\n"
    result = _fix(source)
    assert result.source == XM + XR + 's = "x\u2028y"\n' + "a = xm.xrt_world_size()  # noqa\n" + FIXED + "\n"


def test_columns_after_an_odd_line_break_character():
    # a non-ASCII character before the call: its column maps through the right line
    source = XM + 's = "x\x0cy\u2029z"\n' + 'print("é"); ' + CALL + "\n"
    result = _fix(source)
    assert result.source == XR + 's = "x\x0cy\u2029z"\n' + 'print("é"); ' + FIXED + "\n"
    assert (result.fixed, result.remaining) == (1, 0)


def test_noqa_in_a_file_with_cr_line_ends():
    source = XM + "a = xm.xrt_world_size()  # noqa: XLA801\r" + CALL + "\r"
    result = _fix(source)
    assert result.source == XM + XR + "a = xm.xrt_world_size()  # noqa: XLA801\r" + FIXED + "\r"


def test_lint_line_numbers_after_a_form_feed():
    source = XM + "# \x0c\n" + "a = xm.xrt_world_size()  # noqa: XLA801\n" + CALL + "\n"
    assert [(f.line, f.code) for f in fixer.lint(source, AUTO)] == [(4, "XLA801")]


# -- 3. the comments of a deleted statement stay -----------------------------------------

DDP = "import os\nimport torch.distributed as dist\nimport torch_xla\n\n\n"


def test_trailing_comment_of_a_dropped_master_addr_stays():
    source = DDP + ("def main():\n"
                    "    # the rendezvous\n"
                    '    os.environ["MASTER_ADDR"] = "10.0.0.1"  # for the GPU cluster\n'
                    '    os.environ["MASTER_PORT"] = (  # a free port\n'
                    '        "29500"  # the default\n'
                    "    )\n"
                    '    dist.init_process_group("nccl")\n')
    result = _fix(source, unsafe=True)
    assert result.source == DDP.replace("import os\n", "") + (
        "def main():\n"
        "    # the rendezvous\n"
        "    # for the GPU cluster\n"
        "    # a free port\n"
        "    # the default\n"
        '    dist.init_process_group("nccl")\n')
    assert (result.reverted, result.fixed, result.remaining) == (None, 2, 0)


def test_comments_of_a_dropped_last_statement_of_a_block_stay():
    source = ("import torch\nimport torch_xla\n\n"
              "def step():\n"
              "    x = 1\n"
              "\n"
              "    # free the cache\n"
              "    torch.cuda.empty_cache()  # every step\n"
              "# the end\n")
    result = _fix(source, ALWAYS)
    assert result.source == ("import torch_xla\n\n"
                             "def step():\n"
                             "    x = 1\n"
                             "\n"
                             "    # free the cache\n"
                             "    # every step\n"
                             "# the end\n")


def test_comments_of_a_dropped_last_statement_of_the_module_stay():
    source = ("import torch\nimport torch_xla\n\n"
              "x = 1\n"
              "# the device\n"
              "torch.cuda.set_device(0)  # GPU 0\n")
    result = _fix(source, ALWAYS)
    assert result.source == "import torch_xla\n\nx = 1\n# the device\n# GPU 0\n"


def test_comments_of_a_dropped_statement_go_to_the_next_one():
    source = ("import torch\nimport torch_xla\n\n"
              "if True:\n"
              "    # before\n"
              "    torch.cuda.empty_cache()  # after\n"
              "\n"
              "    y = 2  # y's own\n")
    result = _fix(source, ALWAYS)
    assert result.source == ("import torch_xla\n\n"
                             "if True:\n"
                             "    # before\n"
                             "    # after\n"
                             "\n"
                             "    y = 2  # y's own\n")


def test_trailing_comment_of_a_removed_import_stays():
    source = "import torch\n" + XM.rstrip("\n") + "  # the old API\n\n" + CALL + "\n"
    result = _fix(source)
    assert result.source == "import torch\n" + XR + "# the old API\n\n" + FIXED + "\n"


def test_comments_inside_a_removed_import_stay():
    source = ("from torch_xla.core.xla_model import (  # the model\n"
              "    xrt_world_size,  # old\n"
              "    mark_step,\n"
              ")\n"
              "n = xrt_world_size()\n"
              "mark_step()\n")
    result = _fix(source)
    assert result.source == ("import torch_xla\n" + XR + "# the model\n# old\n"
                             "n = xr.world_size()\n"
                             "torch_xla.sync()\n")


def test_diff_lines_as_python_sees_them():
    # a form feed is not a line end: two lines, the first one unchanged
    from flake8_xla import fix

    assert fix.unified_diff("# a\x0cb\nx = 1\n", "# a\x0cb\nx = 2\n", "f.py") == \
        "--- f.py\n+++ f.py\n@@ -1,2 +1,2 @@\n # a\x0cb\n-x = 1\n+x = 2\n"


# -- a removed argument's comment stays where the argument was ------------------------------

DDP_HEAD = "import torch_xla\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n\n\ndef wrap(model, rank):\n"


@pytest.mark.parametrize("call, expected", [
    # in the middle: its comment on a line of its own at its indentation
    ("    e = DDP(\n        model,  # the module\n        device_ids=[rank],  # the ids\n"
     "        gradient_as_bucket_view=True,\n    )\n",
     "    e = DDP(\n        model,  # the module\n        # the ids\n"
     "        gradient_as_bucket_view=True,\n    )\n"),
    # the last one: the comment of the one before stays on it
    ("    f = DDP(\n        model,  # the module\n        gradient_as_bucket_view=True,  # view\n"
     "        device_ids=[rank],  # the ids\n    )\n",
     "    f = DDP(\n        model,  # the module\n        gradient_as_bucket_view=True,  # view\n"
     "        # the ids\n    )\n"),
    # the first one
    ("    i = DDP(\n        device_ids=[rank],  # the ids\n        module=model,\n"
     "        gradient_as_bucket_view=True)\n",
     "    i = DDP(\n        # the ids\n        module=model,\n        gradient_as_bucket_view=True)\n"),
    # on a line with another argument: the comment trails that line
    ("    h = DDP(model, device_ids=[rank],  # the ids\n            gradient_as_bucket_view=True)\n",
     "    h = DDP(model,  # the ids\n            gradient_as_bucket_view=True)\n"),
])
def test_comment_of_a_removed_argument_stays(call, expected):
    result = _fix(DDP_HEAD + call + "    return 1\n")
    assert (result.source, result.reverted) == (DDP_HEAD + expected + "    return 1\n", None)


def test_touched_lists_the_edited_lines():
    # the rename on line 3, the dropped statement on line 5; the import lines are not listed
    source = ("import torch\nimport torch_xla.core.xla_model as xm\n"
              "n = xm.xrt_world_size()\n"
              "m = 1\n"
              "torch.cuda.empty_cache()\n"
              "k = 2\n")
    result = _fix(source, ALWAYS)
    assert result.source == XR + FIXED + "\nm = 1\nk = 2\n"
    assert result.touched == ((3, 3), (5, 5))
    assert _fix(XM + "m = 1\n").touched == ()


def _case_inputs():
    from pathlib import Path

    folder = Path(__file__).resolve().parent / "fix_cases"
    return sorted(p for p in folder.glob("*.py") if not p.name.endswith(".fixed.py"))


@pytest.mark.parametrize("end", ["\r", "\r\n"], ids=["CR", "CRLF"])
@pytest.mark.parametrize("path", _case_inputs(), ids=lambda p: p.stem)
def test_every_fix_case_keeps_its_line_ends(path, end):
    # the fix cases with \r or \r\n line ends: the expected output, with the same line ends
    from flake8_xla import docgen

    text = path.read_text(encoding="utf-8")
    flags = docgen.source_flags(text)
    settings = docgen.settings_from_flags([f for f in flags if f != "--unsafe-fixes"])
    expected = path.with_name(path.stem + ".fixed.py").read_text(encoding="utf-8")
    result = fixer.fix_source(text.replace("\n", end), settings, unsafe="--unsafe-fixes" in flags)
    assert (result.source, result.reverted) == (expected.replace("\n", end), None)


def test_comments_a_rewrite_drops_go_above_its_statement():
    # XLA002 rebuilds the launcher's arguments: their comments go on lines above it, in order
    head = "import torch\nimport torch.multiprocessing as mp\nimport torch_xla\n\n\n" \
           "def train(rank, loader, model, optimizer):\n" \
           "    for x in loader:\n" \
           "        model(x.to(torch_xla.device())).sum().backward()\n\n\n" \
           'if __name__ == "__main__":\n' \
           "    # launch\n"
    source = head + ("    mp.spawn(\n"
                     "        train,  # the step\n"
                     "        args=(None, None, None),\n"
                     "        nprocs=8,  # one per chip\n"
                     "    )  # the end\n")
    result = _fix(source, ALWAYS, unsafe=True)
    assert result.source == head.replace("import torch.multiprocessing as mp\n", "") + (
        "    # the step\n"
        "    # one per chip\n"
        "    torch_xla.launch(train, args=(None, None, None))  # the end\n")


def test_comments_of_a_block_emptied_by_a_fix_come_before_its_pass():
    source = ("import torch\nimport torch_xla\n"
              "if torch:\n"
              "    # free it\n"
              "    torch.cuda.empty_cache()  # every step\n"
              "else:\n"
              "    x = 1\n")
    result = _fix(source, ALWAYS)
    assert result.source == ("import torch\nimport torch_xla\n"
                             "if torch:\n"
                             "    # free it\n"
                             "    # every step\n"
                             "    pass\n"
                             "else:\n"
                             "    x = 1\n")


# -- 5. an import kept on purpose: `# noqa` (found by the adversarial pass) -------------------------

@pytest.mark.parametrize("noqa", ["  # noqa: F401", "  # noqa", "  # NOQA:F4", "  # noqa: E501,F401"])
def test_an_import_whose_noqa_suppresses_f401_stays(noqa):
    """A fix left the import unused; its ``# noqa`` (bare, or naming F401 or a prefix of it,
    as flake8 matches it) says it is kept on purpose: it stays, whole. Before, it was removed
    and its noqa comment left alone on a line."""
    result = _fix(XM.replace("\n", noqa + "\n") + CALL + "\n")
    assert (result.source, result.fixed) == (XM.replace("\n", noqa + "\n") + XR + FIXED + "\n", 1)


def test_an_import_whose_noqa_names_other_codes_goes():
    """``# noqa: E501`` does not suppress F401: the unused import goes (its comment stays)."""
    result = _fix(XM.replace("\n", "  # noqa: E501\n") + CALL + "\n")
    assert (result.source, result.fixed) == (XR + "# noqa: E501\n" + FIXED + "\n", 1)


def test_a_from_import_kept_by_noqa_is_not_renamed_away():
    """XLA801/XLA802 on ``from xm import (...)`` would drop the names; the line's noqa keeps
    them, so those two fixes do not start (before: the file's fixes were all reverted,
    "still reported after its fix"); the other fix in the file is still applied."""
    src = ("from torch_xla.core.xla_model import (  # noqa: F401\n    xrt_world_size,\n    get_ordinal,\n)\n"
           + XM + CALL + "\n")
    result = _fix(src)
    assert (result.source, result.fixed, result.remaining, result.reverted) == (
        XR + src.replace(XM + CALL, FIXED), 1, 2, None)  # (isort: `import` lines before `from` lines)
    assert sorted(f.code for f in result.findings) == ["XLA801", "XLA802"]


SAMPLER_SRC = """import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
{imports}


def fit(model, opt, loader):
    for (x,) in pl.MpDeviceLoader(loader, torch_xla.device()):
        model(x).sum().backward()
        xm.optimizer_step(opt)


def shuffled(index, model, opt):
    data = TensorDataset(torch.randn(64, 4))
    loader = DataLoader(data, batch_size=8, shuffle=True, drop_last=True)
    fit(model, opt, loader)


if __name__ == "__main__":
    torch_xla.launch(shuffled, args=(None, None))
"""
SAMPLER_FIXED = SAMPLER_SRC.replace(
    "    loader = DataLoader(data, batch_size=8, shuffle=True, drop_last=True)",
    "    sampler = DistributedSampler(data, num_replicas=xr.world_size(), rank=xr.global_ordinal(), shuffle=True)\n"
    "    loader = DataLoader(data, batch_size=8, sampler=sampler, drop_last=True)")


@pytest.mark.parametrize("imports, fixed_imports", [
    # no `from torch.utils.data import ...` line to join: the import is added (before, it was
    # lost, and the fix reverted with "undefined after the fixes: DistributedSampler")
    ("import torch.utils.data as tud\nDataLoader, TensorDataset = tud.DataLoader, tud.TensorDataset",
     "import torch_xla.runtime as xr\nfrom torch.utils.data import DistributedSampler\n"
     "import torch.utils.data as tud\nDataLoader, TensorDataset = tud.DataLoader, tud.TensorDataset"),
    # a line to join without a noqa: joined
    ("from torch.utils.data import DataLoader, TensorDataset",
     "import torch_xla.runtime as xr\nfrom torch.utils.data import DataLoader, TensorDataset, DistributedSampler"),
    # a `# noqa` line: not joined (the new name would fall under its noqa), a line of its own
    ("from torch.utils.data import DataLoader, TensorDataset  # noqa: E501",
     "import torch_xla.runtime as xr\nfrom torch.utils.data import DataLoader, TensorDataset  # noqa: E501\n"
     "from torch.utils.data import DistributedSampler"),
])
def test_a_from_import_a_fix_needs_is_added_once(imports, fixed_imports):
    result = _fix(SAMPLER_SRC.format(imports=imports), unsafe=True)
    assert (result.source, result.fixed, result.reverted) == (SAMPLER_FIXED.format(imports=fixed_imports), 1, None)


# -- 6. a dropped positional argument: what follows must not move into its place -------------------

SPAWN = "import torch_xla\nimport torch_xla.distributed.xla_multiprocessing as xmp\n\n\ndef fn(i):\n    pass\n\n\n"


@pytest.mark.parametrize("call, expected", [
    # `*rest` after the count: dropping it would move rest's first item (join) into nprocs
    # (before: `xmp.spawn(fn, (), *rest)`, nprocs=True, one process)
    ("xmp.spawn(fn, (), 8, *rest)", "xmp.spawn(fn, (), None, *rest)"),
    ("xmp.spawn(fn, (), 8, True)", "xmp.spawn(fn, (), None, True)"),
    ("xmp.spawn(fn, (), 8, **kw)", "xmp.spawn(fn, (), **kw)"),
    ("xmp.spawn(fn, (), 8)", "xmp.spawn(fn, ())"),
])
def test_a_positional_count_followed_by_positional_arguments_becomes_none(call, expected):
    result = _fix(SPAWN + call + "\n")
    assert (result.source, result.fixed) == (SPAWN + expected + "\n", 1)


# -- 7. a device chosen by a condition: only the CUDA branch moves to XLA --------------------------

LAUNCHED = ("import torch\nimport torch_xla\nimport torch_xla.distributed.xla_multiprocessing as xmp\n\n\n"
            "def train(i, t, c, r):\n    {}\n    return t\n\n\ntorch.manual_seed(0)\nxmp.spawn(train, args=(1, 2, 3))\n")


@pytest.mark.parametrize("line, expected", [
    # before: the whole condition became the XLA device, so the CPU branch moved too
    ('t = t.to("cuda" if c else "cpu")', 't = t.to(torch_xla.device() if c else "cpu")'),
    ('t = t.to("cpu" if c else "cuda:0", non_blocking=True)',
     't = t.to("cpu" if c else torch_xla.device(), non_blocking=True)'),
    ('t = t.to(device="cuda" if c else "cpu")', 't = t.to(device=torch_xla.device() if c else "cpu")'),
    ('t = torch.zeros(3, device="cuda" if c else "cpu")', 't = torch.zeros(3, device=torch_xla.device() if c else "cpu")'),
    ('t = t.to("cuda:0" if c else f"cuda:{r}")', 't = t.to(torch_xla.device())'),
    ('t = t.to("cuda")', 't = t.to(torch_xla.device())'),
    # a condition that asks for CUDA would pick the CPU on a TPU host: the whole choice goes
    ('t = t.to("cuda" if torch.cuda.is_available() else "cpu")', 't = t.to(torch_xla.device())'),
    ('t = t.to("cpu" if not torch.cuda.device_count() else "cuda")', 't = t.to(torch_xla.device())'),
    # torch.device("cpu") would have to stay around the CPU branch: a human
    ('t = torch.device("cuda" if c else "cpu")', 't = torch.device("cuda" if c else "cpu")'),
])
def test_a_conditional_device_keeps_its_other_branch(line, expected):
    result = _fix(LAUNCHED.format(line), ALWAYS)
    assert (result.source, result.fixed, [f.code for f in result.findings]) == (
        LAUNCHED.format(expected), int(line != expected), [] if line != expected else ["XLA401"])


# -- 8. a fix never rewrites another line whose `# noqa` suppresses its code ----------------------

CALLEE = """import torch_xla
import torch_xla.core.xla_model as xm
from torch.utils.data import DataLoader


def fit(model, opt, loader):
    for x in loader:{noqa}
        model(x).sum().backward()
        xm.optimizer_step(opt)


def caller(model, opt, ds):
    fit(model, opt, DataLoader(ds, batch_size=8, drop_last=True))
"""


@pytest.mark.parametrize("source, expected, left", [
    # XLA801 reported on the import: its fix renames every use, one of them on a noqa line
    ("from torch_xla.core.xla_model import xrt_world_size\n\n\ndef f():\n    return xrt_world_size()  # noqa: XLA801\n",
     None, [(1, "XLA801")]),
    # a noqa for another code does not stop it
    ("from torch_xla.core.xla_model import xrt_world_size\n\n\ndef f():\n    return xrt_world_size()  # noqa: E501\n",
     "import torch_xla.runtime as xr\n\n\ndef f():\n    return xr.world_size()  # noqa: E501\n", []),
    # XLA001 reported on the call's first line: the count on its own line says noqa
    ("import torch_xla\nimport torch_xla.distributed.xla_multiprocessing as xmp\n\n\ndef fn(i):\n    pass\n\n\n"
     "xmp.spawn(\n    fn,\n    args=(),\n    nprocs=8,  # noqa: XLA001\n)\n", None, [(9, "XLA001")]),
    # XLA301 reported on the caller's loader: the callee's loop header says noqa
    (CALLEE.format(noqa="  # noqa"), None, [(13, "XLA301")]),
    (CALLEE.format(noqa=""), CALLEE.format(noqa="").replace(
        "    for x in loader:", "    for x in pl.MpDeviceLoader(loader, torch_xla.device()):").replace(
        "import torch_xla.core.xla_model as xm\n",
        "import torch_xla.core.xla_model as xm\nimport torch_xla.distributed.parallel_loader as pl\n"), []),
])
def test_a_fix_leaves_a_line_whose_noqa_suppresses_its_code(source, expected, left):
    """The finding is reported on one line, its fix rewrites another that says ``# noqa``
    for that code: the fix is not applied (before, the noqa line was rewritten; flake8
    itself would not report there, and the user said to leave it)."""
    settings = ALWAYS if "DataLoader" in source else AUTO
    result = _fix(source, settings, unsafe=True)
    assert (result.source, [(f.line, f.code) for f in result.findings]) == (expected or source, left)


WARNS = ('import torch_xla\nimport torch_xla.core.xla_model as xm\nxm.mark_step()\nassert (1, "msg")\n'
         'if xm is 1:\n    pass\ny = "\\d"\n')


@pytest.mark.parametrize("mode", ["--fix", "--diff", "--fix -"])
def test_fix_never_prints_the_warnings_of_compiling_the_users_code(tmp_path, mode):
    """`assert (x, "msg")`, `is 1`, an invalid escape: compiling the text (and each fixed
    version, to verify it) warned, and `--fix` printed `warn.py:4: SyntaxWarning: assertion is
    always true...` with the line; the lint path silences them, so does the fix path now (issue
    30.5). Run with `-W default`, so a warning that escapes would be printed."""
    import subprocess
    import sys

    (tmp_path / "warn.py").write_text(WARNS)
    args = mode.split() + (["--stdin-filename", "warn.py"] if mode.endswith("-") else ["warn.py"])
    proc = subprocess.run([sys.executable, "-W", "default", "-m", "flake8_xla", "--isolated", *args], cwd=tmp_path,
                          input=WARNS if mode.endswith("-") else None, capture_output=True, text=True, timeout=120)
    assert "Warning" not in proc.stderr, proc.stderr
    assert proc.stderr == ("flake8-xla: would fix 1 finding, 0 would remain\n" if mode == "--diff"
                           else "flake8-xla: fixed 1 finding, 0 remaining\n")
    assert "torch_xla.sync()" in (proc.stdout if mode != "--fix" else (tmp_path / "warn.py").read_text())
