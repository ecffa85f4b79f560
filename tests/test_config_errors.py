"""Configuration errors are one line naming the file (or the option) and the key, and a usage-error
exit status, in each front end: the CLI, flake8 and pylint, run for real in subprocesses.

Exit statuses: the CLI and flake8 exit 2 (argparse's usage error); pylint exits 32, its own
"usage error" bit (pylint's 2 means "an error-level message was issued", which a bad config is not).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from flake8_xla.registry import doc_url
from flake8_xla.settings import Settings, SettingsError

BAD = "import torch_xla.core.xla_model as xm\nxm.mark_step()\n"
FINDING = "t.py:2:1: XLA805 xm.mark_step is deprecated since torch_xla 2.8; use torch_xla.sync()"
ONLY = "only {code} and {name} may be used"


def run(tool: str, args, cwd: Path) -> subprocess.CompletedProcess:
    cmd = {
        "cli": [sys.executable, "-m", "flake8_xla"],
        "flake8": [sys.executable, "-m", "flake8", "--select=XLA"],
        "pylint": [sys.executable, "-m", "pylint", "--load-plugins=flake8_xla.pylint_plugin", "--persistent=n",
                   "--disable=all", "--enable=xla", "--score=n"],
    }[tool]
    return subprocess.run([*cmd, *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=300)


def project(tmp_path: Path, files: dict[str, str | bytes] | None = None) -> Path:
    """A project folder (with ``.git``, so nothing above it is read) holding ``t.py`` and ``files``."""
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    (root / "t.py").write_text(BAD)
    for name, body in (files or {}).items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(body, bytes):
            path.write_bytes(body)
        else:
            path.write_text(body)
    return root


def one_line(proc: subprocess.CompletedProcess) -> str:
    """The single stderr line of a run that stopped on a configuration error (no traceback, no output)."""
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert proc.stdout == "", proc.stdout
    return lines[0]


# --- 1. xla-docs-url: only {code} and {name}, validated once when the options are read -------------

TEMPLATES = [
    ("https://x/{code}/{code.x}", f"({{code.x}}: {ONLY})"),  # was a traceback (AttributeError)
    ("https://x/{code}/{name[0]}", f"({{name[0]}}: {ONLY})"),  # was accepted, and left in the URL
    ("https://x/{code}#{foo}", f"({{foo}}: {ONLY})"),
    ("https://x/{code}/{", "(Single '{' encountered in format string; write {{ or }} for a literal brace)"),
    ("https://x/{code!r}", f"({{code!r}}: {ONLY})"),
    ("https://x/{name:>30}", f"({{name:>30}}: {ONLY})"),
    ("https://x/rules.html", "(a URL template with {code} or {name})"),
]


@pytest.mark.parametrize("template,why", TEMPLATES, ids=[t for t, _ in TEMPLATES])
def test_docs_url_on_each_command_line(tmp_path, template, why):
    root = project(tmp_path)
    message = f"option --xla-docs-url: invalid value {template!r} {why}"
    for tool, status in (("cli", 2), ("flake8", 2), ("pylint", 32)):
        proc = run(tool, ["--isolated", f"--xla-docs-url={template}", "t.py"] if tool != "pylint"
                   else [f"--xla-docs-url={template}", "t.py"], root)
        assert one_line(proc) == f"{'flake8-xla' if tool == 'cli' else tool}: error: {message}", tool
        assert proc.returncode == status, (tool, proc.returncode)


def test_docs_url_in_each_config_file(tmp_path):
    template = "https://x/{code}/{code.x}"
    why = f"invalid value {template!r} ({{code.x}}: {ONLY})"
    root = project(tmp_path, {"pyproject.toml": f"[tool.flake8-xla]\nxla-docs-url = '{template}'\n"
                                                f"[tool.pylint.xla]\nxla-docs-url = '{template}'\n"})
    proc = run("cli", ["t.py"], root)
    assert one_line(proc) == f"flake8-xla: error: pyproject.toml: [tool.flake8-xla] xla-docs-url: {why}"
    assert proc.returncode == 2
    proc = run("pylint", ["t.py"], root)
    assert one_line(proc) == f"pylint: error: option --xla-docs-url: {why}" and proc.returncode == 32
    (root / "pyproject.toml").unlink()
    (root / "setup.cfg").write_text(f"[flake8]\nxla-docs-url = {template}\n")
    proc = run("cli", ["t.py"], root)
    assert one_line(proc) == f"flake8-xla: error: setup.cfg: [flake8] xla-docs-url: {why}" and proc.returncode == 2
    proc = run("flake8", ["t.py"], root)  # flake8 does not say which file a value came from
    assert one_line(proc) == f"flake8: error: option --xla-docs-url: {why}" and proc.returncode == 2


def test_docs_url_braces_and_fields_fill_in(tmp_path):
    """A valid template: {code} and {name} filled in, {{ }} a literal brace (str.format's rules)."""
    root = project(tmp_path)
    proc = run("cli", ["--format=json", "--xla-docs-url=https://x/{{v}}/{code}-{name}.html", "t.py"], root)
    assert proc.returncode == 1 and '"url": "https://x/{v}/XLA805-deprecated-mark-step.html"' in proc.stdout


def test_settings_refuse_a_template_doc_url_cannot_fill():
    """Settings built directly (the API) are checked too, so doc_url never raises on a finding."""
    with pytest.raises(SettingsError, match=r"^docs_url: invalid value 'https://x/\{code\.x\}' \(\{code\.x\}: only"):
        Settings(docs_url="https://x/{code.x}")
    assert doc_url("XLA805", Settings(docs_url="https://x/{{{code}}}")) == "https://x/{XLA805}"


# --- 2. pyproject.toml that cannot be read ---------------------------------------------------------

PYPROJECTS = [
    ("tool = 1\n", "pyproject.toml: tool: expected a table, got integer"),
    ('[tool]\nflake8-xla = "x"\n', "pyproject.toml: tool.flake8-xla: expected a table, got string"),
    (b'[tool.flake8-xla]\nexclude = ["\xff"]\n', "pyproject.toml: line 2: not UTF-8 (byte 0xff)"),
    ("[tool.flake8-xla\n", "pyproject.toml: invalid TOML: Expected ']' at the end of a table declaration "
                           "(at line 1, column 17)"),
]


@pytest.mark.parametrize("body,message", PYPROJECTS, ids=["tool-not-table", "section-not-table", "bytes", "toml"])
def test_unreadable_pyproject(tmp_path, body, message):
    root = project(tmp_path, {"pyproject.toml": body})
    proc = run("cli", ["t.py"], root)
    assert one_line(proc) == f"flake8-xla: error: {message}" and proc.returncode == 2
    proc = run("cli", ["--config=pyproject.toml", "t.py"], root)
    assert one_line(proc) == f"flake8-xla: error: {message}" and proc.returncode == 2


# --- 3. the pyproject.toml search stops at the project root ----------------------------------------

def test_parent_pyproject_above_the_project_root_is_not_read(tmp_path):
    (tmp_path / "pyproject.toml").write_text("tool = 1\n")  # someone else's broken file
    root = project(tmp_path)
    proc = run("cli", ["t.py"], root)
    assert (proc.returncode, proc.stdout, proc.stderr) == (1, FINDING + "\n", "")
    (root / ".git").rmdir()  # no project root marker: the search goes on up, and finds it
    proc = run("cli", ["t.py"], root)
    assert one_line(proc) == f"flake8-xla: error: {tmp_path / 'pyproject.toml'}: tool: expected a table, got integer"


def test_search_goes_up_to_the_project_root(tmp_path):
    """From a subpackage with its own pyproject.toml (no [tool.flake8-xla]), the project's table
    at the root still applies (as Black and Ruff find theirs); a broken pyproject.toml on the way
    is reported: it might be the one meant."""
    root = project(tmp_path, {"pyproject.toml": '[tool.flake8-xla]\nextend-ignore = ["XLA805"]\n',
                              "pkg/pyproject.toml": "[project]\nname = 'pkg'\n", "pkg/t.py": BAD})
    assert run("cli", ["t.py"], root / "pkg").returncode == 0
    (root / "pkg" / "pyproject.toml").write_text("[project\n")
    proc = run("cli", ["t.py"], root / "pkg")
    assert one_line(proc) == ("flake8-xla: error: pyproject.toml: invalid TOML: Expected ']' at the end of a "
                              "table declaration (at line 1, column 9)")


# --- 4. a flake8 config file that cannot be read ---------------------------------------------------

INIS = [
    ("setup.cfg", "[flake8]\nexclude = a\nexclude = b\n", "line 3: duplicate key 'exclude' in [flake8]"),
    ("tox.ini", "[flake8]\nexclude = a\n[flake8]\n", "line 3: duplicate section [flake8]"),
    (".flake8", "exclude = a\n[flake8]\n", "line 1: no section header before 'exclude = a'"),
    ("setup.cfg", b"[flake8]\nexclude = \xff\n", "line 2: not UTF-8 (byte 0xff)"),
    ("setup.cfg", "[flake8]\nper-file-ignores\n", "line 2: cannot parse 'per-file-ignores'"),
    # flake8 itself stops on a duplicate anywhere in the file (a traceback): so does the CLI
    ("tox.ini", "[testenv]\ndeps = a\ndeps = b\n", "line 3: duplicate key 'deps' in [testenv]"),
]


@pytest.mark.parametrize("name,body,problem", INIS, ids=["dup-key", "dup-section", "no-header", "bytes", "syntax",
                                                         "dup-elsewhere"])
def test_unreadable_flake8_config(tmp_path, name, body, problem):
    root = project(tmp_path, {name: body})
    proc = run("cli", ["t.py"], root)
    assert one_line(proc) == f"flake8-xla: error: {name}: {problem}" and proc.returncode == 2
    proc = run("cli", [f"--config={name}", "t.py"], root)
    assert one_line(proc) == f"flake8-xla: error: {name}: {problem}" and proc.returncode == 2


def test_unreadable_config_of_another_tool_is_skipped_as_flake8_skips_it(tmp_path):
    """A setup.cfg that does not parse and has no [flake8] section: flake8 skips it (and reads
    the next candidate); so does the CLI."""
    root = project(tmp_path, {"setup.cfg": b"[metadata]\nname = \xff\n", "tox.ini": "[flake8]\nextend-ignore = XLA8\n"})
    assert run("flake8", ["t.py"], root).returncode == 0
    proc = run("cli", ["t.py"], root)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")


# --- 5. each key of [tool.flake8-xla] has a type ---------------------------------------------------

TYPES = [
    ("format = []", "format: expected a string, got list"),
    ('exit-zero = "yes"', "exit-zero: expected true or false, got string"),
    ("respect-gitignore = 1", "respect-gitignore: expected true or false, got integer"),
    ("select = 1", "select: expected a string or a list of strings, got integer"),
    ('extend-exclude = ["a", 2]', "extend-exclude: expected a string or a list of strings, got list containing integer"),
    ("per-file-ignores = 1", "per-file-ignores: expected a string, a list of strings or a table, got integer"),
    ('per-file-ignores = {"tests/*" = 1}',
     "per-file-ignores.'tests/*': expected a string or a list of strings, got integer"),
    ("xla-scope = true", "xla-scope: expected a string, got boolean"),
    ("xla_version = 2.10", 'xla_version: expected a string, got float (write the release as a string, e.g. "2.7")'),
    ("xla-launchers = {a = 1}", "xla-launchers: expected a string or a list of strings, got table"),
    ("xla-docs-url = 1979-05-27", "xla-docs-url: expected a string, got date"),
]


@pytest.mark.parametrize("line,message", TYPES, ids=[line for line, _ in TYPES])
def test_wrong_type_in_pyproject(tmp_path, line, message):
    root = project(tmp_path, {"pyproject.toml": f"[tool.flake8-xla]\n{line}\n"})
    proc = run("cli", ["t.py"], root)
    assert one_line(proc) == f"flake8-xla: error: pyproject.toml: [tool.flake8-xla] {message}"
    assert proc.returncode == 2


def test_right_types_in_pyproject(tmp_path):
    root = project(tmp_path, {"pyproject.toml": (
        '[tool.flake8-xla]\nformat = "json"\nexit-zero = true\nrespect-gitignore = false\nselect = "XLA"\n'
        'extend-exclude = ["a", "b"]\nper-file-ignores = {"t.py" = ["XLA1"], "u.py" = "XLA2"}\n'
        'xla-scope = "always"\nxla-version = "2.9"\nxla-launchers = "run"\nxla-reducing-calls = ["a.b"]\n')})
    proc = run("cli", ["t.py"], root)
    assert (proc.returncode, proc.stderr) == (0, "") and '"code": "XLA805"' in proc.stdout


# --- 6. command-line errors: one line, without the usage block --------------------------------------

ARGS = [
    (["--bogus"], "flake8-xla: error: unrecognized arguments: --bogus (see flake8-xla --help)"),
    (["--config"], "flake8-xla: error: argument --config: expected one argument (see flake8-xla --help)"),
    (["rule", "--bogus"], "flake8-xla rule: error: unrecognized arguments: --bogus (see flake8-xla rule --help)"),
    (["rule", "XLA999"], "flake8-xla rule: error: unknown rule 'XLA999' (flake8-xla --list-rules lists them)"),
]


@pytest.mark.parametrize("args,line", ARGS, ids=[" ".join(a) for a, _ in ARGS])
def test_argument_errors_are_one_line(tmp_path, args, line):
    proc = run("cli", args, project(tmp_path))
    assert one_line(proc) == line and proc.returncode == 2


@pytest.mark.parametrize("where", ["command line", "setup.cfg", "pyproject.toml"])
def test_choice_options_are_labelled_once(tmp_path, where):
    # `option option --xla-project` was printed: parse_project labelled the option itself
    files = {"setup.cfg": "[flake8]\nxla-project = maybe\n"} if where == "setup.cfg" else \
        {"pyproject.toml": '[tool.flake8-xla]\nxla-project = "maybe"\n'} if where == "pyproject.toml" else {}
    root = project(tmp_path, files)
    args = ["--xla-project=maybe", "t.py"] if where == "command line" else ["t.py"]
    proc = run("cli", args, root)
    label = {"command line": "option --xla-project", "setup.cfg": "setup.cfg: [flake8] xla-project",
             "pyproject.toml": "pyproject.toml: [tool.flake8-xla] xla-project"}[where]
    assert one_line(proc) == f"flake8-xla: error: {label}: invalid value 'maybe' (choose from 'on', 'off')"
    assert proc.returncode == 2
