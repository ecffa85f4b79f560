"""Never crash the user's lint run: odd, deep, huge and generated programs lint without an
exception and without XLA000, through the engine and through real flake8."""

from __future__ import annotations

import ast
import sys
import textwrap

import pytest

from flake8_runner import flake8
from flake8_xla import engine
from flake8_xla.settings import Settings

from syntax_samples import HEADER, SYNTAX
ALWAYS = Settings(scope="always")


def lint_ok(source: str, settings: Settings = ALWAYS) -> list:
    tree = ast.parse(source)
    found = engine.run(tree, settings, source)
    assert not [f for f in found if f.code == "XLA000"], found
    for f in found:
        assert f.line >= 1 and f.col >= 0 and f.code.startswith("XLA") and f.message
    return found


def _max_depth(make) -> int:
    """The deepest nesting ``ast.parse`` accepts for a generator of nested source."""
    lo, hi = 1, 1
    while True:
        try:
            ast.parse(make(hi))
        except (SyntaxError, RecursionError, MemoryError):
            break
        lo, hi = hi, hi * 2
        if hi > 1 << 20:
            return lo
    while hi - lo > 1:
        mid = (lo + hi) // 2
        try:
            ast.parse(make(mid))
            lo = mid
        except (SyntaxError, RecursionError, MemoryError):
            hi = mid
    return lo


def test_twenty_thousand_term_chain_in_a_step_loop():
    """A 20,000-term ``a + a + ...`` in a step loop: built as a tree, since CPython 3.11's
    ``ast.parse`` itself gives up on it (the engine must not, whatever the tree's depth)."""
    src = HEADER + textwrap.dedent("""\
        def train(i, loader, model, opt):
            for a in loader:
                loss = a + a
                loss.backward()
                opt.step()
        torch_xla.launch(train, args=(None, None, None))
    """)
    tree = ast.parse(src)
    assign = tree.body[3].body[0].body[0]
    chain = ast.Name("a", ast.Load(), lineno=6, col_offset=15)
    for i in range(19999):
        chain = ast.BinOp(chain, ast.Add(), ast.Name("a", ast.Load(), lineno=6, col_offset=15),
                          lineno=6, col_offset=15)
    assign.value = chain
    found = engine.run(tree, ALWAYS, None)
    assert [(f.line, f.code) for f in found] == [(8, "XLA201")]
    longest = _max_depth(lambda n: HEADER + "loss = " + " + ".join(["a"] * n) + "\n")
    lint_ok(HEADER + "for a in b:\n    loss = " + " + ".join(["a"] * (longest // 2)) + "\n    loss.backward()\n")


@pytest.mark.parametrize("shape", ["parens", "lists", "calls", "attrs", "subscripts", "unary", "lambda"])
def test_nesting_as_deep_as_ast_parse_accepts(shape):
    makers = {
        "parens": lambda n: "x = " + "(" * n + "xm.mark_step()" + ")" * n,
        "lists": lambda n: "x = " + "[" * n + "1" + "]" * n,
        "calls": lambda n: "x = " + "f(" * n + "1" + ")" * n,
        "attrs": lambda n: "x = xm" + ".a" * n,
        "subscripts": lambda n: "x = xm" + "[0]" * n,
        "unary": lambda n: "x = " + "-" * n + "1",
        "lambda": lambda n: "x = " + "lambda: " * n + "1",
    }
    make = makers[shape]
    depth = _max_depth(make)
    lint_ok(HEADER + make(depth))


def test_deeply_nested_statements():
    def make(n):
        lines, indent = [], ""
        for i in range(n):
            lines.append(f"{indent}if x{i}:")
            indent += " "
        lines.append(f"{indent}xm.mark_step()")
        return HEADER + "\n".join(lines) + "\n"
    lint_ok(make(_max_depth(make)))


def test_five_thousand_line_function():
    body = "\n".join(f"    x{i} = model(x{i - 1}).cuda()" for i in range(1, 5000))
    src = HEADER + f"def f(model, x0):\n{body}\n    return x4999\n"
    found = lint_ok(src, Settings())
    assert len(found) == 4999 and {f.code for f in found} == {"XLA401"}


def test_one_megabyte_string_literal():
    src = HEADER + "s = '" + "x" * (1 << 20) + "'\nxm.mark_step()\n"
    assert [f.code for f in lint_ok(src, Settings())] == ["XLA805"]


@pytest.mark.parametrize("version", sorted(SYNTAX), ids=lambda v: "%d.%d" % v)
def test_every_syntax_form(version):
    if sys.version_info[:2] < version:
        pytest.skip(f"Python {version} syntax")
    src = HEADER + textwrap.dedent(SYNTAX[version])
    lint_ok(src)


def test_odd_programs_through_flake8(tmp_path):
    """Real flake8 over the adversarial inputs: no traceback, no XLA000."""
    files = []
    for i, src in enumerate([
        HEADER + "x = " + "(" * 150 + "1" + ")" * 150 + "\n",
        HEADER + "\n".join(f"def f{i}(): f{i + 1}()" for i in range(2000)) + "\n",
        HEADER + "for x in y:\n    for z in x:\n        z.backward()\n        xm.optimizer_step()\n",
        "\n",
        "# only a comment about torch_xla\n",
    ]):
        path = tmp_path / f"odd{i}.py"
        path.write_text(src)
        files.append(path)
    found = flake8(files, ["--xla-scope=always"])
    assert not any(code == "XLA000" for v in found.values() for _, _, code in v)


def test_alias_chains_and_fan_out_stay_linear():
    """Names re-bound many times, chained into each other, and a wide call graph with many
    step loops: each resolves once (memoised), so this finishes at once instead of 8**30."""
    lines = [HEADER.rstrip(), "def f0(i): pass"]
    for i in range(1, 31):
        lines.append(" = ".join([f"f{i}"] * 8) + f" = f{i - 1}")
    lines.append("torch_xla.launch(f30)")
    for i in range(300):
        lines.append(f"def h{i}(model, opt, x):\n    model(x).sum().backward()\n    h{(i + 1) % 300}(model, opt, x)")
    for i in range(40):
        lines.append(f"def loop{i}(i, loader, model, opt):\n    for x in loader:\n        h{i}(model, opt, x)\n"
                     f"        opt.step()\ntorch_xla.launch(loop{i}, args=(None, None, None))")
    found = lint_ok("\n".join(lines) + "\n")
    assert [f.code for f in found] == ["XLA201"] * 40


def test_global_and_nonlocal_at_any_level():
    """`global x` at module level is legal (found in torch/distributed/c10d_logger.py: it
    once sent the model into endless recursion); nonlocal without an enclosing binding."""
    src = HEADER + textwrap.dedent("""\
        global _logger
        _logger = None
        def f():
            global _logger
            _logger = xm.mark_step
            def g():
                nonlocal_free = 1
                def h():
                    nonlocal nonlocal_free
                    nonlocal_free = xm.mark_step
                return h
            return g
        class C:
            global _logger
            _logger = 1
    """)
    assert {f.code for f in lint_ok(src)} == {"XLA805"}


@pytest.mark.slow  # a whole corpus: about two minutes
def test_whole_standard_library_lints_without_internal_errors():
    """Every module of the running Python's standard library (real, odd, old code) through
    the engine in porting mode: no XLA000, no exception."""
    import sysconfig
    import warnings
    from pathlib import Path

    stdlib = Path(sysconfig.get_paths()["stdlib"])
    checked = 0
    for path in sorted(stdlib.rglob("*.py")):
        if "site-packages" in path.parts:
            continue
        try:
            source = path.read_text(encoding="utf-8")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tree = ast.parse(source)
        except (UnicodeDecodeError, SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        found = engine.run(tree, ALWAYS, None)  # no fast path: walk every file
        assert not [f for f in found if f.code == "XLA000"], (path, found)
        checked += 1
    assert checked > 500


def test_deep_call_chain_from_a_launched_step_loop():
    """A 1,000-function call chain below a launched step loop: helpers are followed
    iteratively (a recursive walk raised RecursionError at about 330 levels)."""
    lines = [HEADER.rstrip()]
    lines += [f"def f{i}(x):\n    return f{i + 1}(x)" for i in range(1000)]
    lines.append("def f1000(x):\n    return x")
    lines.append("def train(i, loader, model, opt):\n    for x in loader:\n        model(f0(x)).sum().backward()\n"
                 "        opt.step()\ntorch_xla.launch(train, args=(None, None, None))")
    found = lint_ok("\n".join(lines) + "\n")
    assert [f.code for f in found] == ["XLA201"]


def test_deep_caller_chain_into_cuda_code():
    """XLA-off is decided through the callers of a function; a 1,000-deep chain of callers
    must neither recurse without bound nor lose the finding at its end."""
    lines = [HEADER.rstrip(), "def g0(model):\n    return model.cuda()"]
    lines += [f"def g{i}(model):\n    return g{i - 1}(model)" for i in range(1, 1000)]
    lines.append("g999(None)")
    found = lint_ok("\n".join(lines) + "\n", Settings())
    assert [(f.line, f.code) for f in found] == [(5, "XLA401")]
