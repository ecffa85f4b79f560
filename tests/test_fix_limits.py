"""The fixer never hands LibCST a module its native parser cannot take (issue 30.2).

LibCST's parser (Rust) overflowed its stack (SIGSEGV: exit 139, no message, the files after
it not processed) on a module the lint reads fine: an ``and`` chain of 10,000 terms. Now a
check over the ``ast`` refuses what is too deep with one line (``path: not fixed: too
deeply nested for the fixer``) and the rest of the run goes on; and LibCST runs on a thread
with a large stack, so a small ``ulimit -s`` does not bring the crash back below that limit.
The CLI runs in subprocesses here: on the old code the crash would take pytest with it.
The limits measured are in :mod:`flake8_xla.fix.limits` and docs/internals.md."""

from __future__ import annotations

import ast
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from flake8_xla.fix import limits

HEAD = "import torch_xla\nimport torch_xla.core.xla_model as xm\nxm.mark_step()\n"
FIXED_HEAD = "import torch_xla\ntorch_xla.sync()\n"
CHAIN = HEAD + "ok = " + " and ".join(["a"] * 10_000) + "\n"


def cli(args, cwd, **kwargs):
    return subprocess.run([sys.executable, "-m", "flake8_xla", "--isolated", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=120, **kwargs)


@pytest.mark.parametrize("mode", ["--fix", "--diff"])
def test_a_10000_term_chain_is_refused_in_one_line_and_the_next_file_is_fixed(tmp_path, mode):
    (tmp_path / "a_deep.py").write_text(CHAIN)
    (tmp_path / "b_ok.py").write_text(HEAD)
    proc = cli([mode, "a_deep.py", "b_ok.py"], tmp_path)
    line = "a_deep.py: not fixed: too deeply nested for the fixer (line 4: 10004 levels deep, the fixer takes 300)\n"
    assert proc.returncode == 2, proc.stderr  # was -11 (SIGSEGV), with nothing on stderr
    assert proc.stderr.startswith(line)
    assert (tmp_path / "a_deep.py").read_text() == CHAIN
    if mode == "--fix":
        assert (tmp_path / "b_ok.py").read_text() == FIXED_HEAD
        assert proc.stderr == line + "flake8-xla: fixed 1 finding, 1 remaining, 1 file skipped\n"
    else:
        assert "+torch_xla.sync()\n" in proc.stdout and "a_deep.py" not in proc.stdout
        assert proc.stderr == line + "flake8-xla: would fix 1 finding, 1 would remain, 1 file skipped\n"


def test_a_small_stack_does_not_crash_the_fixer_below_the_limit(tmp_path):
    """250 nested `lambda:` (below MAX_DEPTH) under `ulimit -s 512`: LibCST's parser needs
    about 600 KB for them; on the calling thread that was a SIGSEGV, on the fixer's own
    thread the finding is fixed."""
    source = HEAD + "x = " + "lambda: " * 250 + "a\n"
    assert limits.too_deep(ast.parse(source)) is None
    (tmp_path / "nest.py").write_text(source)

    def small_stack():
        resource.setrlimit(resource.RLIMIT_STACK, (512 << 10, resource.getrlimit(resource.RLIMIT_STACK)[1]))

    proc = cli(["--fix", "nest.py"], tmp_path, preexec_fn=small_stack)
    assert (proc.returncode, proc.stderr) == (0, "flake8-xla: fixed 1 finding, 0 remaining\n")
    assert (tmp_path / "nest.py").read_text() == FIXED_HEAD + "x = " + "lambda: " * 250 + "a\n"


def test_depth_counts_each_term_of_a_chain_and_walks_any_ast():
    # Module, Assign, BoolOp (three terms: three levels), Name, its Load
    assert limits.depth(ast.parse("x = a and b and c\n")) == (7, 1)
    assert limits.depth(ast.parse("x = [[a]]\n")) == (8, 1)  # a bracket is two levels
    assert limits.depth(ast.parse("y = 1\nx = (a or b) and (c or d or e)\n"))[1] == 2
    # as deep as the ast goes (about 3,000 levels): no RecursionError in the check itself
    deep = "x = " + "-" * 1900 + "a\n"
    assert limits.depth(ast.parse(deep))[0] == 1904
    assert limits.too_deep(ast.parse(deep)) == \
        "too deeply nested for the fixer (line 1: 1904 levels deep, the fixer takes 300)"
    assert limits.too_deep(ast.parse("x = " + "-" * 290 + "a\n")) is None


def test_on_big_stack_runs_on_a_thread_of_its_own_and_hands_back_errors():
    import threading

    assert limits.on_big_stack(lambda: threading.current_thread().name) == "flake8-xla-fixer"
    with pytest.raises(KeyError):
        limits.on_big_stack(lambda: {}["k"])
    assert threading.stack_size() == 0  # the process's default is put back


# the native limits probed on the same path (--fix over each shape, the deepest the ast takes
# or past the fixer's limit): each file is fixed or refused in one line, the process never dies
FIXED, REFUSED, LIBCST = "fixed", "refused", "LibCST refuses"
SHAPES = {  # shape: (source, outcome)
    "nested-lambda": ("x = " + "lambda: " * 2900 + "a\n", REFUSED),
    "nested-conditional": ("x = " + "a if b else " * 2900 + "c\n", REFUSED),
    "attribute-chain": ("x = a" + ".b" * 2900 + "\n", REFUSED),
    "call-chain": ("x = f" + "()" * 2900 + "\n", REFUSED),
    "nested-brackets": ("x = " + "[" * 199 + "a" + "]" * 199 + "\n", REFUSED),
    "nested-parentheses": ("x = " + "(" * 199 + "a" + ")" * 199 + "\n", FIXED),
    "chain-of-chains": ("x = " + " or ".join("(" + " and ".join(["a"] * 3000) + ")" for _ in range(3)) + "\n",
                        REFUSED),
    "chain-below-the-limit": ("x = " + " and ".join(["a"] * 250) + "\n", FIXED),
    "comparison-chain": ("x = " + " < ".join(["a"] * 5_000) + "\n", FIXED),
    "implicit-string-concatenation": ("x = (" + " ".join(['"s"'] * 10_000) + ")\n", LIBCST),
    "string-sum": ("x = " + " + ".join(['"s"'] * 2900) + "\n", REFUSED),
    "huge-string": ("x = '" + "a" * 1_000_000 + "'\n", FIXED),
    "huge-integer": ("x = " + "9" * 4000 + "\n", FIXED),
    "long-list": ("x = [" + "1, " * 5_000 + "]\n", FIXED),
}


@pytest.mark.parametrize("shape", SHAPES)
def test_native_limits_on_the_fix_path(tmp_path, shape):
    source, outcome = SHAPES[shape]
    (tmp_path / "shape.py").write_text(HEAD + source)
    proc = cli(["--fix", "shape.py"], tmp_path)
    text = (tmp_path / "shape.py").read_text()
    if outcome == FIXED:
        assert (proc.returncode, proc.stderr) == (0, "flake8-xla: fixed 1 finding, 0 remaining\n")
        assert text == FIXED_HEAD + source
        return
    assert text == HEAD + source
    if outcome == REFUSED:
        assert proc.returncode == 2
        assert proc.stderr.startswith("shape.py: not fixed: too deeply nested for the fixer (line 4: ")
    else:  # LibCST's own ParserSyntaxError: said, and the finding remains
        assert (proc.returncode, proc.stderr) == (1, "shape.py: fixes not applied: LibCST cannot parse it "
                                                     "(ParserSyntaxError)\nflake8-xla: fixed 0 findings, 1 remaining\n")


@pytest.mark.slow
@pytest.mark.parametrize("terms", [7_200, 40_000, 200_000])
def test_chains_past_the_native_crash_are_refused(tmp_path, terms):
    """On the main thread's 8 MB stack LibCST's parser crashed from about 7,100 terms; far past
    that, and past what the fixer's own thread could take, the check refuses first."""
    (tmp_path / "c.py").write_text(HEAD + "x = " + " or ".join(["a"] * terms) + "\n")
    proc = cli(["--fix", "c.py"], tmp_path)
    assert proc.returncode == 2 and "too deeply nested for the fixer" in proc.stderr


def test_docs_state_the_measured_limits():
    text = (Path(__file__).resolve().parent.parent / "docs" / "internals.md").read_text(encoding="utf-8")
    assert f"MAX_DEPTH = {limits.MAX_DEPTH}" in text and "7,100 terms" in text
