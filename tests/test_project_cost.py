"""What project mode summarises, counted (the cost row of docs/benchmarks.md rests on it).

- ``torch`` and ``torch_xla`` are the libraries whose API the rules know by name: an absolute
  import of them never resolves to a project file, also in a tree that holds torch_xla's own
  source (the pytorch/xla repository), so none of that source is summarised and the findings
  are those of single-file mode.
- A script that imports no project module runs nothing of another module: the reach index
  does not summarise it, however many such scripts the project has (pytorch/xla's ``test/``).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from flake8_xla import engine, project
from flake8_xla.settings import build
from flake8_xla.project.files import ProjectFiles


def _write(base: Path, files: dict[str, str]) -> list[Path]:
    for name, text in files.items():
        (base / name).parent.mkdir(parents=True, exist_ok=True)
        (base / name).write_text(text, encoding="utf-8")
    return sorted(base.rglob("*.py"))


def _lint(paths: list[Path], mode: str, monkeypatch) -> tuple[set, list[str]]:
    """(findings as (file name, line, col, code), the files summarised) linting every file."""
    summarised: list[str] = []
    real = project.summarise

    def counting(path, *args, **kwargs):
        summarised.append(Path(path).name if Path(path).name != "__init__.py" else Path(path).parent.name)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(project, "summarise", counting)
    project.clear_cache()
    settings = build(None)
    if mode == "off":
        import dataclasses
        settings = dataclasses.replace(settings, project="off")
    found = set()
    try:
        for path in paths:
            text = path.read_text(encoding="utf-8")
            for f in engine.run(ast.parse(text), settings, text, filename=str(path)):
                found.add((path.name, f.line, f.col, f.code))
    finally:
        project.clear_cache()
    return found, sorted(summarised)


#: a tree shaped like pytorch/xla: the library's own package beside its tests
LIBRARY_TREE = {
    "setup.py": "",
    "torch_xla/__init__.py": "import torch\n\n\ndef device():\n    return torch.device('xla')\n",
    "torch_xla/core/__init__.py": "",
    "torch_xla/core/xla_model.py": (
        "import torch\n\n\ndef mark_step():\n    torch.cuda.synchronize()\n\n\n"
        "def optimizer_step(optimizer):\n    optimizer.step()\n    mark_step()\n"),
    "torch_xla/distributed/__init__.py": "",
    "torch_xla/distributed/xla_multiprocessing.py": (
        "import torch_xla\n\n\ndef spawn(fn, args=(), nprocs=None):\n    return torch_xla.launch(fn, args=args)\n"),
    "test/test_train.py": (
        "import torch\nimport torch_xla\nimport torch_xla.core.xla_model as xm\n"
        "import torch_xla.distributed.xla_multiprocessing as xmp\n\n\n"
        "def _mp_fn(index):\n    device = torch_xla.device()\n    model = torch.nn.Linear(2, 2).to(device)\n"
        "    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "    for x in [torch.ones(2)]:\n        loss = model(x.to(device)).sum()\n        loss.backward()\n"
        "        opt.step()\n        xm.mark_step()\n        print(loss.item())\n\n\n"
        "if __name__ == '__main__':\n    xmp.spawn(_mp_fn, args=())\n"),
}


def test_torch_xla_imports_are_the_library_not_project_modules(tmp_path):
    paths = _write(tmp_path, LIBRARY_TREE)
    files = ProjectFiles(tmp_path.resolve())
    test = (tmp_path / "test/test_train.py").resolve()
    assert files.resolve_module(test, "torch_xla.core.xla_model") is None
    assert files.resolve_module(test, "torch_xla") is None
    assert files.resolve_module(test, "torch") is None
    assert files.imports_of(test) == set()
    # a relative import inside the library's own package is the library too, as an absolute one is
    inner = (tmp_path / "torch_xla/distributed/xla_multiprocessing.py").resolve()
    assert files.resolve_module(inner, "core", 2) is None
    assert files.resolve_module(inner, "", 1) is None
    assert files.imports_of(inner) == set()
    assert paths


def test_relative_imports_inside_torch_are_the_library_and_a_users_package_keeps_its_own(tmp_path):
    """torch's own tree (``from . import config`` in ``torch/_dynamo/testing.py``) asks nothing
    of the project layer: linting it followed those imports through torch._dynamo and summarised
    75 of its modules (14 times single-file mode); a user's package resolves as before."""
    _write(tmp_path, {"setup.py": "", "torch/__init__.py": "", "torch/_dynamo/__init__.py": "",
                      "torch/_dynamo/config.py": "x = 1\n",
                      "torch/_dynamo/testing.py": "from . import config\nfrom .config import x\n",
                      "mypkg/__init__.py": "", "mypkg/core.py": "x = 1\n",
                      "mypkg/sub/__init__.py": "", "mypkg/sub/train.py": "from .. import core\nfrom ..core import x\n"})
    files = ProjectFiles(tmp_path.resolve())
    testing = (tmp_path / "torch/_dynamo/testing.py").resolve()
    assert files.resolve_module(testing, "config", 1) is None
    assert files.imports_of(testing) == set()
    train = (tmp_path / "mypkg/sub/train.py").resolve()
    core = (tmp_path / "mypkg/core.py").resolve()
    assert files.resolve_module(train, "core", 2) == core
    assert files.imports_of(train) == {core, (tmp_path / "mypkg/__init__.py").resolve()}


CALLS = {
    "setup.py": "",
    "a.py": "foo(1)\nx.bar (2)\nxbaz(3)\nqux\n(4)\n# quux(5) in a comment counts: text, not a parse\n",
    "b.py": "def bar():  # (a def counts too)\n    return foobar(1) + größe(2) + _under_(3)\n",
    "c.py": "xfoo(1); foo_x(2); bazz(3)\n",
    "d.py": "",
}


@pytest.mark.parametrize("scans", [0, 100])
def test_calling_names_the_same_files_scanned_name_by_name_or_from_the_index(tmp_path, monkeypatch, scans):
    from flake8_xla.project import files as files_module

    _write(tmp_path, CALLS)
    monkeypatch.setattr(files_module, "CALL_SCANS", scans)  # 0: the index at once; 100: a scan per name
    files = ProjectFiles(tmp_path.resolve())
    a, b, c = (str((tmp_path / n).resolve()) for n in ("a.py", "b.py", "c.py"))
    want = {"foo": {a}, "bar": {a, b}, "xbaz": {a}, "baz": set(), "qux": {a}, "quux": {a}, "foobar": {b},
            "größe": {b}, "_under_": {b}, "xfoo": {c}, "foo_x": {c}, "bazz": {c}, "oo": set(), "return": set()}
    assert {name: set(files.calling(name)) for name in want} == want
    assert (files._called is None) == bool(scans)  # which way it answered


def test_library_tree_summarises_nothing_and_matches_single_file_mode(tmp_path, monkeypatch):
    paths = _write(tmp_path, LIBRARY_TREE)
    on, summarised = _lint(paths, "on", monkeypatch)
    off, _ = _lint(paths, "off", monkeypatch)
    assert summarised == []
    assert on == off
    # the step loop's findings come from the API the rules know
    assert on == {("test_train.py", 14, 8, "XLA201"), ("test_train.py", 15, 8, "XLA805")}


SCRIPT = ("import torch\nimport torch_xla\nimport torch_xla.core.xla_model as xm\n\n\n"
          "def test_{i}():\n    t = torch.ones(2, device=torch_xla.device())\n    xm.mark_step()\n    return t\n\n\n"
          "if __name__ == '__main__':\n    test_{i}()\n")


@pytest.mark.parametrize("n", [5, 20])
def test_scripts_importing_no_project_module_are_not_summarised(tmp_path, monkeypatch, n):
    files = {"pyproject.toml": "", "helpers.py": "import torch\n\n\ndef unused():\n    return torch.ones(1)\n"}
    files.update({f"test_{i}.py": SCRIPT.format(i=i) for i in range(n)})
    # one script that does import a project module: it alone is summarised, and what it reaches
    files["test_uses_helper.py"] = ("import torch_xla\nfrom helpers import unused\n\n\n"
                                    "if __name__ == '__main__':\n    unused()\n")
    paths = _write(tmp_path, files)
    on, summarised = _lint(paths, "on", monkeypatch)
    off, _ = _lint(paths, "off", monkeypatch)
    assert summarised == ["helpers.py", "test_uses_helper.py"]
    assert on == off


@pytest.mark.parametrize("text", [
    CALLS["a.py"], CALLS["b.py"], CALLS["c.py"], "", "(", "((", " (x)", "a((b(", "x.y (z( w)", "é(1)",
    "f\u00a0(1)", "f\u2028(1)", "a\n\t (", "'q' (", "\"on_step_end\", 'x'y'", "fire('a', \"b\")(c)", "_(", "9x(",
])
def test_called_names_read_backwards_are_the_pattern_s_names(text):
    from flake8_xla.project.files import _CALLED, _called_names

    assert _called_names(text) == {a or b for a, b in _CALLED.findall(text)}


def test_defines_names_every_def_of_the_project_once_the_questions_outnumber_its_files(tmp_path):
    _write(tmp_path, {"setup.py": "", "a.py": "class Saver:\n    def save(self, x):\n        pass\n",
                      "b.py": "async def  fetch():\n    pass\ndef \\\n  wrapped(): pass\nx = undefined_name\n",
                      "c.py": "saver.save(1)\n"})
    files = ProjectFiles(tmp_path.resolve())
    # the first questions, as many as the project has files (4), are not settled: the set is not built
    assert all(files.defines("nothing_defines_this") for _ in range(4)) and files._defined is None
    want = {"save": True, "fetch": True, "wrapped": True, "Saver": False, "saver": False,
            "undefined_name": False, "nothing_defines_this": False, "größe": True}  # (not ASCII: not settled)
    assert {name: files.defines(name) for name in want} == want
    assert files._defined is not None


def test_a_folder_that_reaches_nothing_is_settled_once_and_a_symlink_in_it_still_asks(tmp_path, monkeypatch):
    from flake8_xla.project import _NOTHING_FOLDERS, _reaches_nothing

    _write(tmp_path, {"setup.py": "", "pkg/a.py": "import torch\nx = torch.ones(1)\n", "pkg/b.py": "import torch\n",
                      "train.py": "import torch_xla\nimport torch_xla.core.xla_model as xm\nxm.mark_step()\n"})
    (tmp_path / "pkg/c.py").symlink_to(tmp_path / "pkg/b.py")
    settings = build(None)
    project.clear_cache()
    try:
        a, b, c = (str(tmp_path / "pkg" / n) for n in ("a.py", "b.py", "c.py"))
        assert project.facts_for(a, settings) is project.EMPTY  # (builds the reach index: it reaches nothing)
        assert _reaches_nothing(a, settings) and list(_NOTHING_FOLDERS[1]) == [str(tmp_path / "pkg")]
        assert _reaches_nothing(b, settings)
        assert not _reaches_nothing(c, settings)  # a symbolic link: its project may be another
        project.clear_cache()
        assert _NOTHING_FOLDERS == [None, {}] and not _reaches_nothing(a, settings)
    finally:
        project.clear_cache()


def test_called_nowhere_else_is_known_only_from_the_index_and_agrees_with_called_elsewhere(tmp_path, monkeypatch):
    from flake8_xla.project import files as files_module

    _write(tmp_path, CALLS)
    files = ProjectFiles(tmp_path.resolve())
    a, b = (str((tmp_path / n).resolve()) for n in ("a.py", "b.py"))
    assert not files.called_nowhere_else("nothing_calls_this", a)  # no index yet: unknown
    monkeypatch.setattr(files_module, "CALL_SCANS", 0)
    files.calling("foo")  # (builds the index)
    for name in ("foo", "bar", "foobar", "nothing_calls_this", "quux"):
        for path in (a, b):
            assert files.called_nowhere_else(name, path) == (not files.called_elsewhere(name, path)), (name, path)
    assert files.called_nowhere_else("foo", a) and not files.called_nowhere_else("foo", b)


def test_the_root_of_each_folder_is_root_from_s_with_the_answers_of_the_folders_above_kept(tmp_path):
    from flake8_xla.project import _MARKED, _root_of
    from flake8_xla.project.files import root_from

    _write(tmp_path, {"outer/pyproject.toml": "", "outer/a/b/c/x.py": "", "outer/a/d/y.py": "",
                      "outer/a/inner/setup.cfg": "", "outer/a/inner/e/z.py": "", "plain/f/w.py": ""})
    folders = ["outer/a/b/c", "outer/a/d", "outer/a", "outer/a/inner/e", "outer/a/inner", "outer", "plain/f", "plain"]
    project.clear_cache()
    try:
        for rel in folders:  # (deepest first: the folders above are answered from what is kept)
            folder = (tmp_path / rel).resolve()
            assert _root_of(str(folder)) == root_from(folder), rel
        assert _MARKED[str((tmp_path / "outer/a").resolve())] == (tmp_path / "outer").resolve()
    finally:
        project.clear_cache()
    assert not _MARKED


def test_the_wrapper_text_filter_reads_the_def_lines_once():
    """``_may_wrap``: a ``launch(``/``spawn(`` handed a name a ``def`` line's parameters name
    (a launch wrapper's shape); the names of the ``def`` lines are read once, so a module of
    thousands of such calls costs two passes over its text (it was one search of the whole
    text per call: 17 s for a 360 KB module, 71 s for 720 KB)."""
    from flake8_xla.project import _may_wrap

    assert _may_wrap("import torch_xla\ndef run(fn, *args):\n    torch_xla.launch(fn, args=args)\n")
    assert _may_wrap("import torch_xla\ndef run(cfg,\n        fn):\n    xmp.spawn(fn=fn)\n")
    assert not _may_wrap("import torch_xla\ndef run(cfg):\n    torch_xla.launch(_mp_fn)\n")
    assert not _may_wrap("def run(fn):\n    torch_xla_launch(fn)\n")  # (no torch_xla named)
    params = ", ".join(f"p{j}" for j in range(30))
    big = "import torch_xla\n" + "".join(f"def f{i}({params}):\n    other.launch(job_{i}, p0)\n" for i in range(2000))
    assert not _may_wrap(big)
    assert _may_wrap(big + "def g(job_7):\n    pass\n")
