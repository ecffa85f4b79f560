"""Fuzzing with hypothesmith: any program the grammar or the AST generator produces lints
without an exception and with well-formed findings.

200 examples per test by default; ``FLAKE8_XLA_FUZZ_EXAMPLES=10000`` for a long run.
"""

from __future__ import annotations

import ast
import os
import warnings

import hypothesmith
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from flake8_xla import engine
from flake8_xla.settings import Settings

# the generators compile odd programs themselves ("'int' object is not callable")
pytestmark = pytest.mark.filterwarnings("ignore::SyntaxWarning")
EXAMPLES = int(os.environ.get("FLAKE8_XLA_FUZZ_EXAMPLES", "200"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=False,
                suppress_health_check=list(HealthCheck))
# Prefixes make the generated code XLA code, so every rule runs on it.
PREFIXES = ["", "import torch_xla\nimport torch_xla.core.xla_model as xm\n",
            "import torch_xla\nimport torch.multiprocessing as mp\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n"]


def check(source: str, scope: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return  # not a program ast.parse accepts: flake8 reports E999 itself
    found = engine.run(tree, Settings(scope=scope), source)
    assert not [f for f in found if f.code == "XLA000"], found
    lines = source.count("\n") + 1
    for f in found:
        assert 1 <= f.line <= lines + 1 and f.col >= 0
        assert f.code.startswith("XLA") and len(f.code) == 6 and "; " in f.message


@settings(max_examples=40, deadline=None, derandomize=False, suppress_health_check=list(HealthCheck))
@given(source=hypothesmith.from_grammar(), prefix=st.sampled_from(PREFIXES), scope=st.sampled_from(["auto", "always"]))
def test_from_grammar_quick(source, prefix, scope):
    check(prefix + source, scope)


@pytest.mark.slow  # the default run keeps 40 examples (test_from_grammar_quick)
@FUZZ
@given(source=hypothesmith.from_grammar(), prefix=st.sampled_from(PREFIXES), scope=st.sampled_from(["auto", "always"]))
def test_from_grammar(source, prefix, scope):
    check(prefix + source, scope)


@pytest.mark.slow  # minutes on two cores: hypothesmith's node strategy builds big modules
@FUZZ
@given(source=hypothesmith.from_node(), prefix=st.sampled_from(PREFIXES), scope=st.sampled_from(["auto", "always"]))
def test_from_node(source, prefix, scope):
    check(prefix + source, scope)


# -- the fixer: no byte lost, nothing edited outside what it fixes ------------------------
#
# check_fix runs the unsafe fixes on an input and checks the output (its docstring says what
# exactly). Inputs: hypothesmith programs between two fixable lines, and the fix cases
# (tests/fix_cases) mutated with hypothesis: blank, whitespace-only, comment and form-feed
# lines inserted anywhere, trailing comments, odd line-break characters in comments, a
# wrapping function, comment and blank lines at the end, \r\n / \r / mixed line ends.

import difflib  # noqa: E402
import io  # noqa: E402
import tokenize  # noqa: E402
from pathlib import Path  # noqa: E402

from flake8_xla import docgen  # noqa: E402
from flake8_xla.lines import split_lines  # noqa: E402

CASE_DIR = Path(__file__).resolve().parent / "fix_cases"
FIX_CASES = sorted(p for p in CASE_DIR.glob("*.py") if not p.name.endswith(".fixed.py"))
FIX_EXAMPLES = int(os.environ.get("FLAKE8_XLA_FUZZ_EXAMPLES", "300"))
FIX_FUZZ = settings(max_examples=FIX_EXAMPLES, deadline=None, derandomize=False,
                    suppress_health_check=list(HealthCheck))
#: layout tokens, left out of the token comparison: blank lines, indentation (a removed or
#: moved statement changes them) and comments (compared on their own)
_LAYOUT = {tokenize.NL, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER, tokenize.COMMENT}
_ALWAYS = Settings(scope="always")


def _tokens(source: str) -> list:
    return list(tokenize.generate_tokens(io.StringIO(source, newline="").readline))


def _touchable(tree: ast.Module, spans) -> set[int]:
    """The lines a fix may edit: those the fixer reports it edits (``FixResult.touched``)
    and every import statement's (the imports a fix adds or leaves unused)."""
    lines = {n for first, last in spans for n in range(first, last + 1)}
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            lines.update(range(node.lineno, node.end_lineno + 1))
    return lines


def _only_imports(tokens: list) -> bool:
    """Are ``tokens`` whole import statements (``import a.b as c`` / ``from a import b``)?"""
    statements, current = [], []
    for kind, text in tokens:
        if kind == tokenize.NEWLINE:
            statements.append(current)
            current = []
        else:
            current.append(text)
    statements.append(current)
    return all(s[:1] in (["import"], ["from"]) for s in statements if s)


def _moved(source: str, result, settings: Settings) -> bool:
    """Did the fixes move a statement (XLA405: the optimizer's assignment goes after the
    statement that moves the module)?"""
    from flake8_xla.fix import fixer

    def count(findings):
        return sum(f.code == "XLA405" for f in findings or ())

    return count(result.findings) < count(fixer.lint(source, settings))


def _slides(keys: list, i1: int, i2: int) -> list[tuple[int, int]]:
    """The windows a deleted (or inserted) run ``keys[i1:i2]`` may slide to with the same
    result: left while the token before it equals its last, right while the token after it
    equals its first."""
    out = [(i1, i2)]
    x, y = i1, i2
    while x > 0 and keys[x - 1] == keys[y - 1]:
        x, y = x - 1, y - 1
        out.append((x, y))
    x, y = i1, i2
    while y < len(keys) and keys[x] == keys[y]:
        x, y = x + 1, y + 1
        out.append((x, y))
    return out


def _within(run: list, runs: list) -> bool:
    """Is ``run`` a contiguous part of one of ``runs``?"""
    n = len(run)
    return any(other[i:i + n] == run for other in runs for i in range(len(other) - n + 1))


def check_fix(source: str, settings: Settings = _ALWAYS) -> str:
    """Fix ``source`` with the unsafe fixes too and check the result; returns "skipped"
    (``ast.parse`` or ``tokenize`` rejects the input), "unchanged", "reverted" or "fixed".

    Asserts, per input:

    * ``fix_source`` does not raise, and an unchanged result is the input itself;
    * a changed output compiles;
    * its comments (tokenize's COMMENT tokens) are the input's, the same texts in the same
      order (a deleted statement's comments stay); in any order when a statement was moved
      (XLA405), which takes its comments along;
    * the code outside what the fixes may touch is unchanged: tokenize both texts, leave out
      the layout tokens (NL, INDENT, DEDENT, comments) and align the (type, string) sequences
      with difflib; every input token in a replaced or deleted run lies on a line a fix may
      edit (one the fixer reports in ``FixResult.touched``: the nodes its edits target, or
      an import statement's), and every inserted run touches such a line (the input token
      before or after it lies on one), is whole import statements, or is part of a run
      deleted elsewhere (a moved statement; likewise a deleted run that is part of a run
      inserted elsewhere is code a moved statement jumped over); a run difflib could as well
      have aligned one token left or right (its first token equals the one after it...)
      counts as inside when one of those slides is;
    * every span the fixer reports holds or neighbours a line that changed (it does not
      report the whole file);
    * a second ``fix_source`` on the output changes nothing.
    """
    from flake8_xla.fix import fixer
    from flake8_xla.fix.imports import SIDE_EFFECT

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            tree = ast.parse(source)
            compile(source, "<in>", "exec", dont_inherit=True)
            before_tokens = _tokens(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError, tokenize.TokenError):
            return "skipped"
        result = fixer.fix_source(source, settings, unsafe=True)
    if result.source == source:
        return "reverted" if result.reverted else "unchanged"
    out = result.source
    assert result.fixed > 0  # (``reverted`` may name fixes rolled back: the kept ones are checked here)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compile(out, "<out>", "exec", dont_inherit=True)
        after_tokens = _tokens(out)
    comments_in = [t.string for t in before_tokens if t.type == tokenize.COMMENT]
    # the one comment a fix adds: `# noqa: F401` on an import it adds for its side effect
    added = {line for line in out.splitlines() if line.endswith(SIDE_EFFECT) and line not in source.splitlines()}
    comments_out = [t.string for t in after_tokens if t.type == tokenize.COMMENT
                    and not (t.string == SIDE_EFFECT.strip() and t.line.rstrip("\r\n") in added)]
    if _moved(source, result, settings):  # a moved statement takes its comments along
        assert sorted(comments_out) == sorted(comments_in)
    else:
        assert comments_out == comments_in
    a = [t for t in before_tokens if t.type not in _LAYOUT]
    ka = [(t.type, t.string) for t in a]
    kb = [(t.type, t.string) for t in after_tokens if t.type not in _LAYOUT]
    assert result.touched, "a fix that changed the text reports no span"
    touchable = _touchable(tree, result.touched)
    opcodes = difflib.SequenceMatcher(None, ka, kb, autojunk=False).get_opcodes()
    # a moved statement: difflib shows it, or the code it jumps over, deleted here and inserted there
    deleted = [ka[i1:i2] for tag, i1, i2, _, _ in opcodes if tag in ("delete", "replace")]
    inserted = [kb[j1:j2] for tag, _, _, j1, j2 in opcodes if tag in ("insert", "replace")]
    for tag, i1, i2, j1, j2 in opcodes:
        if tag == "equal":
            continue
        # difflib picks one of the equal alignments (deleting the first of two `os.environ`
        # lines or the second): a run counts as inside when one of its slides is
        if tag != "insert":
            windows = _slides(ka, i1, i2) if tag == "delete" else [(i1, i2)]
            assert any(all(a[i].start[0] in touchable for i in range(x, y)) or _within(ka[x:y], inserted)
                       for x, y in windows), \
                f"{tag} outside the edited lines: {[(t.start[0], t.string) for t in a[i1:i2]]}"
            continue
        run = kb[j1:j2]
        near = {a[i].start[0] for x, y in _slides(kb, j1, j2) for i in (i1 - (j1 - x) - 1, i1 - (j1 - x))
                if 0 <= i < len(a)}
        assert near & touchable or _only_imports(run) or _within(run, deleted), \
            f"inserted away from the edited lines: {[s for _, s in run]} near lines {sorted(near)}"
    changed = set()  # the lines of the input tokens each change replaces, deletes or sits between
    for tag, i1, i2, j1, j2 in opcodes:
        if tag == "insert":
            changed.update(a[i].start[0] for x, _ in _slides(kb, j1, j2) for i in (i1 - (j1 - x) - 1, i1 - (j1 - x))
                           if 0 <= i < len(a))
        elif tag != "equal":
            changed.update(a[i].start[0] for x, y in _slides(ka, i1, i2) for i in range(x, y))
    idle = [span for span in result.touched if not changed & set(range(span[0] - 1, span[1] + 2))]
    assert not idle, f"reported as edited, unchanged: {idle}"
    again = fixer.fix_source(out, settings, unsafe=True)
    assert again.source == out, f"not idempotent: {again.source!r} ({again.reverted})"
    return "fixed"


_FIXABLE_BEFORE = "import torch_xla\nimport torch_xla.core.xla_model as xm\nn = xm.xrt_world_size()\n"
_FIXABLE_AFTER = "\nrank = xm.get_ordinal()\n"


@settings(max_examples=20, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(source=hypothesmith.from_grammar())
def test_fix_from_grammar_quick(source):
    check_fix(_FIXABLE_BEFORE + source + _FIXABLE_AFTER)


@pytest.mark.slow  # ~1 s per twenty examples
@FIX_FUZZ
@given(source=hypothesmith.from_grammar())
def test_fix_from_grammar(source):
    check_fix(_FIXABLE_BEFORE + source + _FIXABLE_AFTER)


_INDENTS = st.sampled_from(["", "  ", "    ", "        ", "\t"])
_ODD = st.sampled_from(["\x0c", "\x0b", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"])


@st.composite
def _mutation(draw, n_lines: int):
    """(line index, kind, text) of one mutation."""
    kind = draw(st.sampled_from(["blank", "spaces", "comment", "odd comment", "form feed", "trailing"]))
    at = draw(st.integers(0, n_lines))
    indent = draw(_INDENTS)
    text = {"blank": "\n", "spaces": indent + "\n", "comment": indent + "# note\n",
            "odd comment": indent + "# a" + draw(_ODD) + "b\n", "form feed": "\x0c" + indent + "# ff\n",
            "trailing": "  # tail" + draw(_ODD)}[kind]
    return at, kind, text


@st.composite
def mutated_cases(draw):
    """(a fix case's text, mutated; the settings its header asks for)."""
    path = draw(st.sampled_from(FIX_CASES))
    text = path.read_text(encoding="utf-8")
    flags = docgen.source_flags(text)
    settings = docgen.settings_from_flags([f for f in flags if f != "--unsafe-fixes"])
    lines = split_lines(text)
    if draw(st.booleans()):  # the whole script in a function
        lines = ["def _wrapped():\n"] + [("    " + ln) if ln.strip() else ln for ln in lines]
    for at, kind, piece in draw(st.lists(_mutation(len(lines)), max_size=6)):
        at = min(at, len(lines) - 1) if kind == "trailing" else at
        if kind == "trailing":
            body = lines[at].rstrip("\n")
            if body.strip():
                lines[at] = body + piece + "\n"
        else:
            lines.insert(at, piece)
    lines.append(draw(st.sampled_from(["", "# end\n", "    # end\n", "\n\n", "\n  \n", "\t\n\n# end", "  # a\n  # b\n"])))
    source = "".join(lines)
    if draw(st.booleans()):
        source = source.rstrip("\n")
    ending = draw(st.sampled_from(["\n", "\r\n", "\r", "mixed"]))
    if ending == "mixed":
        parts = source.split("\n")
        ends = draw(st.lists(st.sampled_from(["\n", "\r\n", "\r"]), min_size=len(parts), max_size=len(parts)))
        source = "".join(p + e for p, e in zip(parts, ends))[:-len(ends[-1]) or None]
    elif ending != "\n":
        source = source.replace("\n", ending)
    return source, settings


def _fuzz_cases(case):
    source, settings = case
    check_fix(source, settings)


@settings(max_examples=50, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(case=mutated_cases())
def test_fix_mutated_cases_quick(case):
    _fuzz_cases(case)


@pytest.mark.slow
@FIX_FUZZ
@given(case=mutated_cases())
def test_fix_mutated_cases(case):
    _fuzz_cases(case)


@pytest.mark.parametrize("path", FIX_CASES, ids=lambda p: p.stem)
def test_fix_check_on_every_case(path):
    text = path.read_text(encoding="utf-8")
    flags = docgen.source_flags(text)
    settings = docgen.settings_from_flags([f for f in flags if f != "--unsafe-fixes"])
    assert check_fix(text, settings) == "fixed"


class _Broken:
    """A fixer that changes what ``change`` says after the real fix (for the checks' own tests)."""

    def __init__(self, change, touched=None):
        from flake8_xla.fix import fixer

        self.real, self.change, self.touched = fixer.fix_source, change, touched

    def __call__(self, source, settings, **kw):
        import dataclasses

        result = self.real(source, settings, **kw)
        if result.source == source:
            return result
        changes = {"source": self.change(result.source)}
        if self.touched is not None:
            changes["touched"] = self.touched
        return dataclasses.replace(result, **changes)


_CHECKED = ("import torch_xla.core.xla_model as xm\n"
            "# about n\n"
            "n = xm.xrt_world_size()  # the count\n"
            "m = n + 1\n"
            "def f():\n"
            "    return m\n")


@pytest.mark.parametrize("change, touched, message", [
    (lambda s: s, None, None),  # the real fixer passes
    (lambda s: s.replace("  # the count", ""), None, "assert"),  # a comment lost
    (lambda s: s.replace("m = n + 1", "m = n + 2"), None, "outside the edited lines"),
    (lambda s: s.replace("    return m", "    return m\n    m = 2"), None, "inserted away"),
    (lambda s: s, ((3, 3), (6, 6)), "reported as edited, unchanged"),
    (lambda s: s.replace("m = n + 1", "m = xm.xrt_world_size()"), None, "outside the edited lines"),
])
def test_check_fix_fails_on_a_broken_fixer(monkeypatch, change, touched, message):
    from flake8_xla.fix import fixer

    monkeypatch.setattr(fixer, "fix_source", _Broken(change, touched))
    if message is None:
        assert check_fix(_CHECKED) == "fixed"
        return
    with pytest.raises(AssertionError, match=message):
        check_fix(_CHECKED)
