"""The release path (docs/releasing.md): `python -m build` makes an sdist and a wheel that `twine
check` passes, whose file lists and metadata are checked, whose long description has no
relative link; each installs into a clean venv, where the default tests (from the unpacked
sdist) pass and the wheel lints the example; the version lives in one place; the release
workflow is a valid GitHub workflow; the README's pre-commit form works from a clone. The
slow ones build and install (run with `python -m pytest -m slow`; .ci/run does): everything a
release does but the upload."""

from __future__ import annotations

import configparser
import hashlib
import html.parser
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from importlib import resources
from pathlib import Path

import pytest

import flake8_xla

ROOT = Path(__file__).resolve().parent.parent
WORKFLOW = ROOT / ".github" / "workflows" / "release.yml"


def _readme_example_lines(path_prefix: str) -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```text\n(.*?)```", text, re.S).group(1)
    return [line.replace("examples/", path_prefix, 1) for line in block.splitlines()]


def test_version_in_one_place():
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    assert cfg["metadata"]["version"] == "attr: flake8_xla.__version__"
    assert re.fullmatch(r"\d+\.\d+\.\d+", flake8_xla.__version__)
    hits = [p for p in ROOT.glob("**/*") if p.is_file() and p.suffix in {".py", ".cfg", ".toml"}
            and ".venv" not in p.parts and "build" not in p.parts and "tests" not in p.parts
            and f'"{flake8_xla.__version__}"' in p.read_text(encoding="utf-8", errors="ignore")]
    assert [p.relative_to(ROOT).as_posix() for p in hits] == ["flake8_xla/__init__.py"]


def _setup_py():
    """setup.py as a module (its setup() runs only as __main__, as setuptools runs it)."""
    spec = importlib.util.spec_from_file_location("flake8_xla_setup_py", ROOT / "setup.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _Links(html.parser.HTMLParser):
    """The hrefs and srcs of an HTML page, and its ids."""

    def __init__(self):
        super().__init__()
        self.links, self.ids = [], set()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.links += [attrs[k] for k in ("href", "src") if attrs.get(k) is not None]
        if attrs.get("id"):
            self.ids.add(attrs["id"])


def _render(markdown: str) -> _Links:
    """The page the index shows for a markdown long description: readme_renderer, as twine check."""
    import warnings

    import readme_renderer.markdown

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no silent fallback to plain text
        page = readme_renderer.markdown.render(markdown, variant="GFM")
    assert page is not None
    links = _Links()
    links.feed(page)
    return links


def _dead_on_the_index(links: _Links) -> list[str]:
    """Links that do not work on an index page: relative ones, and anchors to no id there."""
    return [link for link in links.links
            if not re.match(r"https://", link) and not (link.startswith("#") and link[1:] in links.ids)]


def _github_anchor(heading: str) -> str:
    """The anchor GitHub gives a markdown heading."""
    text = re.sub(r"[`*_\[\]]|\]\([^)]*\)", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def test_long_description_has_no_relative_link():
    """README.md's relative links are dead on the index page; the long description (setup.py)
    is the README with each made absolute, to the file at this release's tag, which exists in
    this tree (its anchor too). In-page anchors (#install) work there and are kept."""
    setup_py = _setup_py()
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(_dead_on_the_index(_render(readme))) >= 10  # the README itself has them
    described = setup_py.absolute_links(readme)
    links = _render(described)
    assert _dead_on_the_index(links) == []
    tree = f"{flake8_xla.__url__}/blob/v{flake8_xla.__version__}/"
    ours = [link for link in links.links if link.startswith(tree)]
    assert len(ours) >= 10
    for link in ours:
        path, _, anchor = link.removeprefix(tree).partition("#")
        assert (ROOT / path).is_file(), link
        if anchor:
            headings = re.findall(r"^#+ (.+)$", (ROOT / path).read_text(encoding="utf-8"), re.M)
            assert anchor in {_github_anchor(h) for h in headings}, link
    assert setup_py.absolute_links("[a](docs/x.md) [b](#c) [d](https://e/f) `[g](h)`\n```\n[i](j)\n```\n") == (
        f"[a]({tree}docs/x.md) [b](#c) [d](https://e/f) `[g](h)`\n```\n[i](j)\n```\n")


def test_metadata_for_the_index():
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    meta = cfg["metadata"]
    assert meta["license_expression"] == "Apache-2.0" and meta["license_files"] == "LICENSE" and "license" not in meta
    assert (ROOT / "LICENSE").read_text(encoding="utf-8").split()[:3] == ["Apache", "License", "Version"]
    classifiers = meta["classifiers"].split()
    assert {"Framework :: Flake8", "Typing :: Typed", "Programming Language :: Python :: 3.11"} <= set(
        line.strip() for line in meta["classifiers"].splitlines() if line.strip()) and classifiers
    assert (ROOT / "flake8_xla" / "py.typed").is_file() and "py.typed" in cfg["options.package_data"]["flake8_xla"]
    assert cfg["options"]["python_requires"] == ">=3.10"
    assert {"tpu", "torch_xla", "pytorch-xla", "flake8"} <= {k.strip() for k in meta["keywords"].split(",")}
    urls = _setup_py().project_urls()
    tree = f"{flake8_xla.__url__}/blob/v{flake8_xla.__version__}/"
    assert urls == {"Homepage": flake8_xla.__url__, "Documentation": tree + "docs/index.md",
                    "Changelog": tree + "CHANGELOG.md", "Issues": flake8_xla.__url__ + "/issues",
                    "Source": flake8_xla.__url__}
    assert all((ROOT / u.removeprefix(tree)).is_file() for u in urls.values() if u.startswith(tree))


def test_release_workflow_is_a_valid_github_workflow():
    yaml = pytest.importorskip("yaml")
    jsonschema = pytest.importorskip("jsonschema")
    pytest.importorskip("check_jsonschema")
    schema_file = resources.files("check_jsonschema.builtin_schemas.vendor") / "github-workflows.json"
    schema = json.loads(schema_file.read_text(encoding="utf-8"))
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    # PyYAML reads YAML 1.1, where the key `on` is True; GitHub reads it as "on"
    workflow["on"] = workflow.pop(True)
    jsonschema.validators.validator_for(schema)(schema).validate(workflow)
    assert workflow["on"] == {"push": {"tags": ["v*"]}}
    publish = workflow["jobs"]["publish"]
    assert publish["permissions"] == {"id-token": "write"} and publish["needs"] == "build"
    assert any(step.get("uses", "").startswith("pypa/gh-action-pypi-publish@") for step in publish["steps"])
    build_steps = " ".join(step.get("run", "") for step in workflow["jobs"]["build"]["steps"])
    for needle in ("python -m build", "twine check --strict", "flake8_xla/__init__.py", "flake8-xla train_port.py"):
        assert needle in build_steps


def _run(cmd, **kw):
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900, **kw)
    assert proc.returncode == 0, f"{cmd}\n{proc.stdout}\n{proc.stderr}"
    return proc


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """`python -m build` of this tree: (sdist, wheel), checked by `twine check --strict`."""
    dist = tmp_path_factory.mktemp("dist")
    import fcntl  # (POSIX; the slow set runs there)

    # setuptools stages the sdist in ROOT/flake8_xla-X.Y.Z and removes it after: two builds of
    # this tree at once (two pytest-xdist workers, two slow runs) would remove each other's
    with open(Path(tempfile.gettempdir()) / f"flake8-xla-build-{hashlib.sha1(bytes(ROOT)).hexdigest()[:12]}.lock",
              "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        _run([sys.executable, "-m", "build", "--outdir", str(dist), str(ROOT)])
    sdists, wheels = sorted(dist.glob("*.tar.gz")), sorted(dist.glob("*.whl"))
    version = flake8_xla.__version__
    assert [p.name for p in sdists] == [f"flake8_xla-{version}.tar.gz"]
    assert [p.name for p in wheels] == [f"flake8_xla-{version}-py3-none-any.whl"]
    _run([sys.executable, "-m", "twine", "check", "--strict", *map(str, sdists + wheels)])
    return sdists[0], wheels[0]


def _tracked_files() -> list[str] | None:
    """The repository's files (git ls-files, with new ones not ignored); None outside a git checkout."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        return None
    out = [subprocess.run(["git", "ls-files", *extra], capture_output=True, text=True, cwd=ROOT, check=True).stdout
           for extra in ((), ("--others", "--exclude-standard"))]
    return sorted({line for text in out for line in text.splitlines() if (ROOT / line).is_file()})


def _venv(where: Path, *requirements: str) -> Path:
    """A fresh venv at ``where`` with ``requirements`` installed; its python."""
    _run([sys.executable, "-m", "venv", str(where)])
    python = where / ("Scripts" if os.name == "nt" else "bin") / "python"
    _run([str(python), "-m", "pip", "install", "-q", *requirements])
    return python


@pytest.mark.slow
@pytest.mark.xdist_group("release")
def test_built_file_lists_and_metadata(built):
    """The sdist is the repository's tree (so a packager can run the tests from it: docs/,
    examples/, tests/ and what they read), plus setuptools' PKG-INFO and egg-info; the
    wheel is the package (its data, py.typed) and its dist-info, nothing else."""
    sdist, wheel = built
    version = flake8_xla.__version__
    top = f"flake8_xla-{version}/"
    with tarfile.open(sdist) as tar:
        members = [m.name.removeprefix(top) for m in tar.getmembers() if m.isfile()]
    assert all(not name.startswith("flake8_xla.egg-info/") or name.split("/")[1] in {
        "PKG-INFO", "SOURCES.txt", "dependency_links.txt", "entry_points.txt", "requires.txt", "top_level.txt"}
        for name in members)
    shipped = sorted(n for n in members if n != "PKG-INFO" and not n.startswith("flake8_xla.egg-info/"))
    tracked = _tracked_files()
    if tracked is not None:
        assert shipped == tracked
    for needed in ("docs/index.md", "docs/rules/XLA101.md", "examples/train_port.py", "tests/conftest.py",
                   "tests/test_release.py", "tests/cases", "tests/fixtures", "tests/data", "CHANGELOG.md",
                   ".ci/run", ".pre-commit-hooks.yaml", "setup.py", "MANIFEST.in", "LICENSE"):
        assert any(n == needed or n.startswith(needed + "/") for n in shipped), needed
    assert not [n for n in members if "__pycache__" in n or n.endswith(".pyc")]

    with zipfile.ZipFile(wheel) as whl:
        names = sorted(whl.namelist())
        meta = whl.read(f"flake8_xla-{version}.dist-info/METADATA").decode()
        entry_points = whl.read(f"flake8_xla-{version}.dist-info/entry_points.txt").decode()
    info = f"flake8_xla-{version}.dist-info/"
    assert sorted(n for n in names if n.startswith(info)) == [info + n for n in (
        "METADATA", "RECORD", "WHEEL", "entry_points.txt", "licenses/LICENSE", "top_level.txt")]
    package = sorted(n for n in names if not n.startswith(info))
    want = sorted(n for n in shipped if n.startswith("flake8_xla/") and (
        n.endswith(".py") or n == "flake8_xla/py.typed" or re.fullmatch(r"flake8_xla/data/[^/]+\.json", n)))
    assert package == want and "flake8_xla/py.typed" in package and "flake8_xla/data/messages.json" in package
    assert "XLA = flake8_xla.flake8_plugin:Plugin" in entry_points and "flake8-xla = flake8_xla.__main__:main" in entry_points

    headers, _, description = meta.partition("\n\n")
    for line in (f"Version: {version}", "License-Expression: Apache-2.0", "License-File: LICENSE",
                 "Requires-Python: >=3.10", "Classifier: Framework :: Flake8", "Classifier: Typing :: Typed",
                 "Requires-Dist: pathspec>=0.12", f"Project-URL: Homepage, {flake8_xla.__url__}",
                 f"Project-URL: Issues, {flake8_xla.__url__}/issues",
                 "Description-Content-Type: text/markdown"):
        assert line in headers.splitlines(), line
    assert not [h for h in headers.splitlines() if h.startswith("Classifier: License ::")]
    # the index renders this description: no relative link in it
    assert description.startswith("# flake8-xla") and _dead_on_the_index(_render(description)) == []


@pytest.mark.slow
@pytest.mark.xdist_group("release")
def test_wheel_installs_and_lints_the_example(built, tmp_path):
    _, wheel = built
    python = _venv(tmp_path / "venv", str(wheel))
    bindir = python.parent
    work = tmp_path / "user"
    work.mkdir()
    shutil.copy(ROOT / "examples" / "train_port.py", work / "train_port.py")
    shutil.copy(ROOT / "examples" / "train_port_done.py", work / "train_port_done.py")
    want = _readme_example_lines("")
    for tool in ([str(bindir / "flake8"), "--select=XLA"], [str(bindir / "flake8-xla")]):
        proc = subprocess.run([*tool, "train_port.py", "train_port_done.py"], capture_output=True, text=True,
                              cwd=work, timeout=300)
        assert proc.returncode == 1, proc.stderr
        assert proc.stdout.splitlines() == want, tool
    version_out = subprocess.run([str(bindir / "flake8-xla"), "--version"], capture_output=True, text=True).stdout
    assert version_out.strip() == f"flake8-xla {flake8_xla.__version__}"


def _default_tests_pass(python: Path, tree: Path) -> str:
    """The default test run (setup.cfg's addopts) of the unpacked sdist ``tree``, against the
    flake8_xla installed in ``python``'s venv: PYTHONSAFEPATH keeps the tree's own copy off
    sys.path (for pytest and for the tests' subprocesses). Returns pytest's last line."""
    env = {**os.environ, "PYTHONSAFEPATH": "1"}
    env.pop("FLAKE8_XLA_RUNTIME_PYTHON", None)
    where = subprocess.run([str(python), "-c", "import flake8_xla; print(flake8_xla.__file__)"], cwd=tree, env=env,
                           capture_output=True, text=True, check=True).stdout.strip()
    assert Path(where).is_relative_to(python.parent.parent), where
    proc = subprocess.run([str(python), "-m", "pytest", "-p", "no:cacheprovider", "-q"], cwd=tree, env=env,
                          capture_output=True, text=True, timeout=1500)
    last = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]
    assert re.search(r"\d+ passed", last) and "failed" not in last and "error" not in last, last
    return last


@pytest.fixture(scope="module")
def unpacked(built, tmp_path_factory):
    """The sdist unpacked, as a packager has it (no .git, no ../shared beside it)."""
    where = tmp_path_factory.mktemp("sdist")
    with tarfile.open(built[0]) as tar:
        tar.extractall(where, filter="data")
    return where / f"flake8_xla-{flake8_xla.__version__}"


@pytest.mark.slow
@pytest.mark.xdist_group("release")
@pytest.mark.skipif(sys.version_info < (3, 11), reason="PYTHONSAFEPATH (the installed copy, not the tree's) needs Python 3.11")
def test_sdist_installs_in_a_clean_venv_and_passes_the_default_tests(built, unpacked, tmp_path):
    python = _venv(tmp_path / "venv", f"{built[0]}[test]")
    _default_tests_pass(python, unpacked)


@pytest.mark.slow
@pytest.mark.xdist_group("release")
@pytest.mark.skipif(sys.version_info < (3, 11), reason="PYTHONSAFEPATH (the installed copy, not the tree's) needs Python 3.11")
def test_wheel_in_a_clean_venv_passes_the_default_tests(built, unpacked, tmp_path):
    python = _venv(tmp_path / "venv", f"{built[1]}[test]")
    _default_tests_pass(python, unpacked)


def _readme_precommit_block() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("### pre-commit", 1)[1]
    return re.search(r"```yaml\n(.*?)```", section, re.S).group(1)


def test_readme_precommit_rev_is_the_release_tag():
    """The README's pre-commit form names the project's address and the tag of this version
    (v + __version__: the tag release.yml requires), so bumping the version without it fails."""
    config = _readme_precommit_block()
    assert re.search(r"^  - repo: (\S+)", config, re.M).group(1) == flake8_xla.__url__
    assert re.search(r"^    rev: (\S+)", config, re.M).group(1) == f"v{flake8_xla.__version__}"
    assert "/path/to/flake8-xla" in config and "commit SHA" in config


def _precommit_fails_on_a_bad_file(tmp_path: Path, repo: str, rev: str) -> None:
    """The README's pre-commit config with ``repo`` and ``rev`` filled in installs the hook and
    fails on a bad file, printing the finding."""
    config = _readme_precommit_block().replace(flake8_xla.__url__, repo, 1)
    config = re.sub(r"^    rev: \S+", f"    rev: {rev}", config, count=1, flags=re.M)
    user = tmp_path / "user"
    user.mkdir()
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "cache"), **GIT_ENV}
    (user / ".pre-commit-config.yaml").write_text(config)
    (user / "train.py").write_text("import torch_xla.core.xla_model as xm\nxm.mark_step()\n")
    subprocess.run(["git", "init", "-q"], cwd=user, check=True, env=env)
    subprocess.run(["git", "add", "."], cwd=user, check=True, env=env)
    proc = subprocess.run([sys.executable, "-m", "pre_commit", "run", "--all-files"], cwd=user, capture_output=True,
                          text=True, timeout=900, env=env)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "train.py:2:1: XLA805 xm.mark_step is deprecated" in out and "Failed" in out, out


GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.invalid"}


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="a git checkout needed")
def test_readme_precommit_form_works_from_a_clone(tmp_path):
    """From a clone: this repository as `repo`, its HEAD commit as `rev`."""
    rev = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=ROOT, check=True).stdout.strip()
    _precommit_fails_on_a_bad_file(tmp_path, str(ROOT), rev)


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="a git checkout needed")
def test_readme_precommit_form_works_at_the_release_tag(tmp_path):
    """From a release: a clone of this commit tagged as docs/releasing.md tags it (v +
    __version__), with the README's `rev:` unchanged."""
    clone = tmp_path / "released"
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(ROOT), str(clone)], check=True, env={**os.environ, **GIT_ENV})
    tag = f"v{flake8_xla.__version__}"
    subprocess.run(["git", "tag", "-f", "-a", tag, "-m", f"flake8-xla {flake8_xla.__version__}"], cwd=clone, check=True,
                   env={**os.environ, **GIT_ENV})
    _precommit_fails_on_a_bad_file(tmp_path, str(clone), tag)


def test_ci_uses_a_temporary_venv_and_runs_the_slow_tests():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "rm -rf .venv" not in ci and "mktemp -d" in ci and 'cd "$copy"' in ci
    assert "python -m pytest -m slow" in ci and "python -m pytest -m runtime" in ci
    assert ci.count('"$rc" -eq 5') == 3  # pytest's "no tests" fails the default, slow and runtime runs
