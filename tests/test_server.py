"""The language server (``flake8-xla server``), driven over stdio as an editor drives it.

One server process per module (the ``editor`` fixture: pygls's own client in a thread of
its own, the server in a subprocess); each test opens its own document. The helpers at the
end (settings, positions, ``# noqa`` placement, edits) are tested directly.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("pygls")
from lsprotocol import types as lsp  # noqa: E402
from pygls.lsp.client import LanguageClient  # noqa: E402

import flake8_xla  # noqa: E402
from flake8_xla import server  # noqa: E402
from flake8_xla.cli.files import Result  # noqa: E402
from flake8_xla.lines import split_lines  # noqa: E402
from flake8_xla.settings import DEFAULT_DOCS_URL  # noqa: E402

TIMEOUT = 30

SOURCE = '''\
import os
import torch_xla
import torch_xla.core.xla_model as xm


def f(i):
    s = "😋"; xm.mark_step()
    for x in range(3):
        y = x
    return int(os.environ["WORLD_SIZE"])


torch_xla.launch(f)
'''
MARK_STEP = "xm.mark_step is deprecated since torch_xla 2.8; use torch_xla.sync()"
WORLD_SIZE = 'os.environ["WORLD_SIZE"] is not set by the XLA launcher; use xr.world_size()'


class Editor:
    """An editor's side of one LSP connection: pygls's ``LanguageClient`` on an event loop in
    its own thread, with blocking calls for the tests. Keeps every ``publishDiagnostics``
    (per URI, in order), every ``window/showMessage`` and every ``workspace/applyEdit``
    (answered as applied)."""

    def __init__(self, root: Path, init_options: dict | None = None) -> None:
        self.root = root
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.client = LanguageClient("test-editor", "1")
        self.published: dict[str, list[lsp.PublishDiagnosticsParams]] = {}
        self.messages: list[str] = []
        self.applied: list[lsp.WorkspaceEdit] = []
        self.cond = threading.Condition()

        @self.client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def publish(params: lsp.PublishDiagnosticsParams) -> None:
            with self.cond:
                self.published.setdefault(params.uri, []).append(params)
                self.cond.notify_all()

        @self.client.feature(lsp.WINDOW_SHOW_MESSAGE)
        def show(params: lsp.ShowMessageParams) -> None:
            with self.cond:
                self.messages.append(params.message)
                self.cond.notify_all()

        @self.client.feature(lsp.WORKSPACE_APPLY_EDIT)
        def apply(params: lsp.ApplyWorkspaceEditParams) -> lsp.ApplyWorkspaceEditResult:
            with self.cond:
                self.applied.append(params.edit)
                self.cond.notify_all()
            return lsp.ApplyWorkspaceEditResult(applied=True)

        self.run(self.client.start_io(sys.executable, "-m", "flake8_xla", "server", cwd=str(root)))
        self.init = self.run(self.client.initialize_async(lsp.InitializeParams(
            capabilities=lsp.ClientCapabilities(notebook_document=lsp.NotebookDocumentClientCapabilities(
                synchronization=lsp.NotebookDocumentSyncClientCapabilities())), root_uri=root.as_uri(), initialization_options=init_options,
            workspace_folders=[lsp.WorkspaceFolder(uri=root.as_uri(), name="root")])))
        self.client.initialized(lsp.InitializedParams())

    def run(self, coro):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(TIMEOUT)

    def call(self, fn, *args):
        """A notification (sent in the loop's thread, in order with the requests)."""
        async def send():
            fn(*args)
        self.run(send())

    def open(self, name: str, text: str, version: int = 1, language: str = "python") -> str:
        path = self.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("# on disk: not what the buffer holds\n", encoding="utf-8")
        uri = path.as_uri()
        self.call(self.client.text_document_did_open, lsp.DidOpenTextDocumentParams(
            lsp.TextDocumentItem(uri=uri, language_id=language, version=version, text=text)))
        return uri

    def open_notebook(self, name: str, cells: list[tuple[str, str]]) -> tuple[str, list[str]]:
        """Open a notebook of ``(kind, text)`` cells (``code`` or ``markdown``): its URI and
        its cells' URIs."""
        uri = (self.root / name).as_uri()
        cell_uris = [f"vscode-notebook-cell:{(self.root / name).as_posix()}#C{i}" for i in range(len(cells))]
        self.call(self.client.notebook_document_did_open, lsp.DidOpenNotebookDocumentParams(
            notebook_document=lsp.NotebookDocument(uri=uri, notebook_type="jupyter-notebook", version=1, cells=[
                lsp.NotebookCell(kind=lsp.NotebookCellKind.Code if kind == "code" else lsp.NotebookCellKind.Markup,
                                 document=cell) for (kind, _), cell in zip(cells, cell_uris)]),
            cell_text_documents=[lsp.TextDocumentItem(uri=cell, language_id="python" if kind == "code" else "markdown",
                                                      version=1, text=text)
                                 for (kind, text), cell in zip(cells, cell_uris)]))
        return uri, cell_uris

    def change(self, uri: str, version: int, text: str) -> None:
        self.call(self.client.text_document_did_change, lsp.DidChangeTextDocumentParams(
            lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
            [lsp.TextDocumentContentChangeWholeDocument(text=text)]))

    def diagnostics(self, uri: str, version: int | None) -> list[lsp.Diagnostic]:
        """The diagnostics published for ``uri`` at ``version`` (waits for them)."""
        deadline = time.monotonic() + TIMEOUT
        with self.cond:
            while True:
                for params in self.published.get(uri, []):
                    if params.version == version:
                        return params.diagnostics
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"no diagnostics for {uri} version {version}: {self.published.get(uri)}")
                self.cond.wait(left)

    def actions(self, uri: str, diagnostics: list[lsp.Diagnostic], line: int, only=None):
        return self.run(self.client.text_document_code_action_async(lsp.CodeActionParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri),
            range=lsp.Range(lsp.Position(line, 0), lsp.Position(line, 0)),
            context=lsp.CodeActionContext(diagnostics=diagnostics, only=only)))) or []

    def configure(self, settings) -> None:
        self.call(self.client.workspace_did_change_configuration, lsp.DidChangeConfigurationParams(settings=settings))

    def close(self) -> int:
        self.run(self.client.shutdown_async(None))
        self.client.exit(None)
        proc = self.client._server
        code = self.run(asyncio.wait_for(proc.wait(), TIMEOUT))
        self.run(self.client.stop())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(TIMEOUT)
        return code


@pytest.fixture(scope="module")
def editor(tmp_path_factory):
    root = tmp_path_factory.mktemp("ws")
    (root / ".git").mkdir()  # the project root: no configuration above it is read
    ed = Editor(root)
    yield ed
    assert ed.close() == 0


def apply_edit(text: str, edit: lsp.WorkspaceEdit, uri: str, version: int) -> str:
    """``text`` with ``edit`` (one versioned document's UTF-16 edits) applied as a client does."""
    (change,) = edit.document_changes
    assert change.text_document.uri == uri and change.text_document.version == version
    lines = split_lines(text)

    def offset(pos: lsp.Position) -> int:
        before = sum(len(line) for line in lines[:pos.line])
        line = lines[pos.line] if pos.line < len(lines) else ""
        units, chars = 0, 0
        while units < pos.character:
            units += 2 if ord(line[chars]) > 0xFFFF else 1
            chars += 1
        return before + chars

    for e in sorted(change.edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[:offset(e.range.start)] + e.new_text + text[offset(e.range.end):]
    return text


def summary(diags: list[lsp.Diagnostic]) -> list[tuple]:
    return [(d.range.start.line, d.range.start.character, d.range.end.line, d.range.end.character, d.code,
             d.severity, d.message) for d in diags]


def test_initialize_advertises_full_sync_code_actions_and_the_fix_all_command(editor):
    caps = editor.init.capabilities
    assert caps.text_document_sync.change == lsp.TextDocumentSyncKind.Full
    assert list(caps.code_action_provider.code_action_kinds) == ["quickfix", "source.fixAll.flake8-xla"]
    assert list(caps.execute_command_provider.commands) == ["flake8-xla.fixAll"]
    assert editor.init.server_info.name == "flake8-xla"


def test_open_publishes_the_buffer_findings_with_utf16_ranges(editor):
    uri = editor.open("pkg/open.py", SOURCE)
    diags = editor.diagnostics(uri, 1)
    # line 7 is `    s = "😋"; xm.mark_step()`: the emoji is 2 UTF-16 units (3 bytes in ast.s column), so the call starts at 14
    assert summary(diags) == [
        (6, 14, 6, 26, "XLA805", lsp.DiagnosticSeverity.Warning, MARK_STEP),
        (9, 15, 9, 39, "XLA109", lsp.DiagnosticSeverity.Error, WORLD_SIZE),
    ]
    assert {d.source for d in diags} == {"flake8-xla"}
    assert [d.tags for d in diags] == [(lsp.DiagnosticTag.Deprecated,), None]
    # each code links this release's page (no xla-docs-url configured)
    pages = f"{flake8_xla.__url__}/blob/v{flake8_xla.__version__}/docs/rules/"
    assert [d.code_description.href for d in diags] == [pages + "XLA805.md", pages + "XLA109.md"]
    assert [d.data for d in diags] == [{"key": [7, 16, "XLA805"], "fix": "safe", "version": 1},
                                       {"key": [10, 15, "XLA109"], "fix": "unsafe", "version": 1}]


def test_quick_fixes_of_a_safe_finding_edit_only_its_lines_at_its_version(editor):
    uri = editor.open("pkg/quick.py", SOURCE, version=4)
    diags = editor.diagnostics(uri, 4)
    actions = editor.actions(uri, [diags[0]], 6)
    assert [(a.title, a.kind, a.is_preferred) for a in actions] == [
        ("Fix XLA805: use torch_xla.sync()", "quickfix", True),
        ("Add `# noqa: XLA805` on line 7", "quickfix", None),
        ("Fix every safe flake8-xla finding in the file", "source.fixAll.flake8-xla", None),
    ]
    fixed = apply_edit(SOURCE, actions[0].edit, uri, 4)
    assert fixed == SOURCE.replace("import torch_xla.core.xla_model as xm\n", "").replace(
        "xm.mark_step()", "torch_xla.sync()")
    (edit,) = actions[1].edit.document_changes[0].edits
    assert (edit.range.start.line, edit.range.start.character, edit.range.end.character, edit.new_text) == \
        (6, 28, 28, "  # noqa: XLA805")
    assert apply_edit(SOURCE, actions[1].edit, uri, 4) == SOURCE.replace(
        "xm.mark_step()\n", "xm.mark_step()  # noqa: XLA805\n")


def test_an_unsafe_fix_is_labelled_not_preferred_and_left_out_of_fix_all(editor):
    uri = editor.open("pkg/unsafe.py", SOURCE)
    diags = editor.diagnostics(uri, 1)
    actions = editor.actions(uri, [diags[1]], 9)
    assert [(a.title, a.is_preferred) for a in actions] == [
        ("Fix XLA109 (unsafe: may change behaviour): use xr.world_size()", False),
        ("Add `# noqa: XLA109` on line 10", None),
    ]
    assert apply_edit(SOURCE, actions[0].edit, uri, 1) == SOURCE.replace("import os\n", "").replace(
        "import torch_xla.core.xla_model as xm\n",
        "import torch_xla.core.xla_model as xm\nimport torch_xla.runtime as xr\n").replace(
        'os.environ["WORLD_SIZE"]', "xr.world_size()")
    (fix_all,) = editor.actions(uri, [], 0, only=["source.fixAll"])
    assert fix_all.kind == "source.fixAll.flake8-xla"
    # the safe fix only: XLA109 stays
    assert apply_edit(SOURCE, fix_all.edit, uri, 1) == SOURCE.replace(
        "import torch_xla.core.xla_model as xm\n", "").replace("xm.mark_step()", "torch_xla.sync()")


def test_fix_all_command_sends_apply_edit_and_the_change_is_linted_after_a_pause(editor):
    uri = editor.open("pkg/command.py", SOURCE)
    editor.diagnostics(uri, 1)
    result = editor.run(editor.client.workspace_execute_command_async(lsp.ExecuteCommandParams(
        command="flake8-xla.fixAll", arguments=[{"uri": uri, "version": 1}])))
    assert result == {"applied": True, "reason": None}
    fixed = apply_edit(SOURCE, editor.applied[-1], uri, 1)
    assert "torch_xla.sync()" in fixed and "xm." not in fixed
    # two changes in a row: only the last is linted (the first one's lint was debounced away)
    editor.change(uri, 2, fixed + "\n")
    editor.change(uri, 3, fixed)
    assert summary(editor.diagnostics(uri, 3)) == [
        (8, 15, 8, 39, "XLA109", lsp.DiagnosticSeverity.Error, WORLD_SIZE)]
    assert [p.version for p in editor.published[uri]] == [1, 3]


def test_a_stale_version_gets_no_edit(editor):
    uri = editor.open("pkg/stale.py", SOURCE)
    diags = editor.diagnostics(uri, 1)
    result = editor.run(editor.client.workspace_execute_command_async(lsp.ExecuteCommandParams(
        command="flake8-xla.fixAll", arguments=[{"uri": uri, "version": 7}])))
    assert result == {"applied": False, "reason": "the document is not open, or changed since it was linted"}
    # a change not yet linted: the old diagnostics' actions are not offered
    editor.change(uri, 2, SOURCE.replace("import os\n", "import os\n\n"))
    assert editor.actions(uri, [diags[0]], 6) == []
    assert editor.diagnostics(uri, 2)[0].range.start.line == 7


def test_other_languages_and_odd_action_requests_get_nothing(editor):
    md = editor.open("pkg/notes.md", "xm.mark_step()\n", language="markdown")
    uri = editor.open("pkg/odd.py", SOURCE)
    diags = editor.diagnostics(uri, 1)
    assert md not in editor.published  # linted in order: the markdown file would have come first
    odd = [lsp.Diagnostic(range=diags[0].range, message="m", source="flake8-xla", data=data)
           for data in ("x", {"key": {"a": 1}, "version": 1}, {"key": [7, 16, "XLA999"], "version": 1},
                        {"key": [7, 16, "XLA805"], "version": 2})]
    assert editor.actions(uri, odd, 6) == []
    assert editor.actions(md, diags, 6) == []


def test_settings_from_the_client_link_pages_ignore_exclude_and_report_bad_values(editor):
    uri = editor.open("pkg/settings.py", SOURCE)
    assert [d.code for d in editor.diagnostics(uri, 1)] == ["XLA805", "XLA109"]
    editor.configure({"flake8-xla": {"xla-docs-url": "https://docs.example/{code}.html", "ignore": ["XLA109"],
                                     "no-such-key": 1}})
    deadline = time.monotonic() + TIMEOUT
    while len(editor.published[uri]) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    (diag,) = editor.published[uri][1].diagnostics
    assert diag.code == "XLA805" and diag.code_description.href == "https://docs.example/XLA805.html"
    assert any("unknown setting 'no-such-key'" in m for m in editor.messages)
    editor.configure({"exclude": ["pkg"]})
    while len(editor.published[uri]) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert list(editor.published[uri][2].diagnostics) == []
    editor.configure({"xla-version": "1.9"})
    while len(editor.published[uri]) < 4 and time.monotonic() < deadline:
        time.sleep(0.05)
    (error,) = editor.published[uri][3].diagnostics
    assert error.message.startswith("configuration error: client setting xla-version: invalid value '1.9'")
    assert error.severity == lsp.DiagnosticSeverity.Error
    editor.configure(None)
    while len(editor.published[uri]) < 5 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [d.code for d in editor.published[uri][4].diagnostics] == ["XLA805", "XLA109"]


NOTEBOOK = [
    ("code", "import torch_xla\nimport torch_xla.core.xla_model as xm\n%pip install torch_xla"),
    ("markdown", "# xm.mark_step()"),
    ("code", "!nvidia-smi\ndevice = xm.xla_device()\nxm.mark_step()"),
    ("code", "%%bash\nxm.mark_step()\n"),
    ("code", "%%time\nxm.mark_step()\n"),
]


def test_a_notebook_is_one_module_with_findings_on_their_cells(editor):
    uri, cells = editor.open_notebook("nb/train.ipynb", NOTEBOOK)
    deprecated = "xm.xla_device is deprecated since torch_xla 2.8; use torch_xla.device()"
    warning = lsp.DiagnosticSeverity.Warning
    assert [summary(editor.diagnostics(cell, 1)) for cell in (cells[0], cells[2], cells[3], cells[4])] == [
        [],
        [(1, 9, 1, 22, "XLA804", warning, deprecated), (2, 0, 2, 12, "XLA805", warning, MARK_STEP)],
        [],  # %%bash: not Python
        [(1, 0, 1, 12, "XLA805", warning, MARK_STEP)],  # %%time: its body is
    ]
    assert cells[1] not in editor.published  # markdown
    diag = editor.diagnostics(cells[2], 1)[1]
    actions = editor.actions(cells[2], [diag], 2)
    # fix all would drop the xm import, which a magic may use: not offered while there are magics
    assert [a.title for a in actions] == ["Fix XLA805: use torch_xla.sync()", "Add `# noqa: XLA805` on line 3"]
    assert apply_edit(NOTEBOOK[2][1], actions[0].edit, cells[2], 1) == \
        "!nvidia-smi\ndevice = xm.xla_device()\ntorch_xla.sync()"
    assert apply_edit(NOTEBOOK[2][1], actions[1].edit, cells[2], 1) == \
        "!nvidia-smi\ndevice = xm.xla_device()\nxm.mark_step()  # noqa: XLA805"
    editor.call(editor.client.notebook_document_did_close, lsp.DidCloseNotebookDocumentParams(
        notebook_document=lsp.NotebookDocumentIdentifier(uri=uri),
        cell_text_documents=[lsp.TextDocumentIdentifier(uri=c) for c in cells]))
    deadline = time.monotonic() + TIMEOUT
    while len(editor.published[cells[2]]) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert list(editor.published[cells[2]][-1].diagnostics) == []


def test_a_notebook_sent_as_a_text_document_is_linted_as_its_own_text(editor):
    """A .ipynb opened as a text document holding its JSON (an editor without notebook
    support, told it is Python): its positions are the document's, so it is linted as the
    text it is (a dict expression: nothing), never as cells whose lines would be placed,
    and given `# noqa` edits, in the JSON text. (It published the cells' findings at the
    cells' line numbers and offered a `# noqa` edit that broke the JSON.)"""
    nb = {"cells": [{"cell_type": "code", "execution_count": None, "id": "a", "metadata": {}, "outputs": [],
                     "source": ["import torch_xla.core.xla_model as xm\n", "xm.mark_step()\n", "xm.mark_step()"]}],
          "metadata": {"kernelspec": {"name": "python3", "language": "python", "display_name": "Python 3"}},
          "nbformat": 4, "nbformat_minor": 5}
    text = json.dumps(nb, indent=1) + "\n"
    uri = editor.open("pkg/as_text.ipynb", text)
    assert list(editor.diagnostics(uri, 1)) == []
    fake = lsp.Diagnostic(range=lsp.Range(lsp.Position(1, 0), lsp.Position(1, 4)), message="m", source="flake8-xla",
                          data={"key": [2, 0, "XLA805"], "version": 1})
    assert editor.actions(uri, [fake], 1) == []


def test_a_module_too_deep_for_the_fixer_gets_no_fix_and_the_server_keeps_serving(editor):
    """A code action on a finding of a module with a 10,000-term `and` chain: LibCST's native
    parser crashed the server there (SIGSEGV; linting stopped for every open file). Now the
    fixer refuses it: the `# noqa` action only, and the next document is linted."""
    text = "import torch_xla.core.xla_model as xm\nxm.mark_step()\nok = " + " and ".join(["a"] * 10_000) + "\n"
    uri = editor.open("pkg/deep.py", text)
    diags = editor.diagnostics(uri, 1)
    assert [d.code for d in diags] == ["XLA805"]
    actions = editor.actions(uri, diags, 1)
    assert [a.title for a in actions] == ["Add `# noqa: XLA805` on line 2"]
    assert editor.actions(uri, [], 0, only=["source.fixAll"]) == []
    after = editor.open("pkg/after_deep.py", SOURCE)
    assert [d.code for d in editor.diagnostics(after, 1)] == ["XLA805", "XLA109"]


def _frame(message: dict) -> bytes:
    body = json.dumps(message).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def test_a_hint_is_a_hint_once_the_client_selects_the_hints(editor):
    from flake8_xla.registry import all_rules

    text = all_rules()["XLA304"].bad[0]
    uri = editor.open("hints/loader.py", text)
    assert list(editor.diagnostics(uri, 1)) == []  # hints are off by default, as in flake8
    editor.configure({"extend-select": "XLA"})
    try:
        deadline = time.monotonic() + TIMEOUT
        while len(editor.published[uri]) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert summary(editor.published[uri][1].diagnostics) == [
            (5, 31, 5, 59, "XLA304", lsp.DiagnosticSeverity.Hint,
             "DataLoader without drop_last=True: the short last batch recompiles the step; pass drop_last=True")]
    finally:
        editor.configure(None)


def test_python_m_flake8_xla_server_answers_initialize_and_exits_0_after_shutdown(tmp_path):
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}}},
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        {"jsonrpc": "2.0", "id": 2, "method": "shutdown"},
        {"jsonrpc": "2.0", "method": "exit"},
    ]
    out = subprocess.run([sys.executable, "-m", "flake8_xla.server"], input=b"".join(map(_frame, messages)),
                         capture_output=True, timeout=TIMEOUT, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    replies = [json.loads(part.split(b"\r\n\r\n", 1)[1]) for part in out.stdout.split(b"Content-Length: ")[1:]]
    assert [r["id"] for r in replies] == [1, 2]
    assert replies[0]["result"]["serverInfo"]["name"] == "flake8-xla"
    assert replies[1]["result"] is None


def test_a_request_whose_parameters_do_not_validate_gets_an_invalid_params_error(tmp_path):
    """JSON-RPC answers every request: a code action with `range: null` gets the error reply
    InvalidParams (-32602) under its id (it got no answer, and editors wait on one), and the
    server keeps answering: the hover after it, then shutdown."""
    uri = (tmp_path / "a.py").as_uri()
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}}},
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        {"jsonrpc": "2.0", "method": "textDocument/didOpen",
         "params": {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": "x = 1\n"}}},
        {"jsonrpc": "2.0", "id": 2, "method": "textDocument/codeAction",
         "params": {"textDocument": {"uri": uri}, "range": None, "context": {"diagnostics": []}}},
        {"jsonrpc": "2.0", "id": "three", "method": "textDocument/codeAction",
         "params": {"textDocument": {"uri": uri}, "range": {"start": {"line": 0, "character": 0},
                                                            "end": {"line": 0, "character": 0}},
                    "context": {"diagnostics": []}}},
        {"jsonrpc": "2.0", "id": 4, "method": "shutdown"},
        {"jsonrpc": "2.0", "method": "exit"},
    ]
    out = subprocess.run([sys.executable, "-m", "flake8_xla", "server"], input=b"".join(map(_frame, messages)),
                         capture_output=True, timeout=TIMEOUT, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    replies = [json.loads(part.split(b"\r\n\r\n", 1)[1]) for part in out.stdout.split(b"Content-Length: ")[1:]]
    answers = {r["id"]: r for r in replies if "id" in r}
    assert sorted(answers, key=str) == [1, 2, 4, "three"]
    assert answers[2]["error"] == {"code": -32602, "message": "Invalid Params"}
    assert answers["three"]["result"] is None and answers[4]["result"] is None
    assert not [r for r in replies if r.get("method") == "window/showMessage"]  # no "Error in server" either


def test_without_pygls_the_server_says_how_to_install_it(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "pygls", None)
    assert server.main([]) == 2
    assert capsys.readouterr().err == ("flake8-xla server: error: the language server needs pygls: "
                                       "pip install 'flake8-xla[lsp]'\n")


# -- the helpers ---------------------------------------------------------------------------


@pytest.mark.parametrize("line, expected", [
    ("x = xm.mark_step()\n", (0, 18, 18, "  # noqa: XLA805")),
    ("x = xm.mark_step()   \n", (0, 18, 21, "  # noqa: XLA805")),
    ("x = xm.mark_step()  # noqa: E501\n", (0, 32, 32, ",XLA805")),
    ("x = xm.mark_step()  # NOQA:E501, W291 \n", (0, 37, 37, ", XLA805")),
    ("x = xm.mark_step()  # why\n", (0, 25, 25, "  # noqa: XLA805")),
])
def test_noqa_edit_appends_or_merges(line, expected):
    assert server.noqa_edit(line, 1, "XLA805") == expected
    text = line[:expected[1]] + expected[3] + line[expected[2]:]
    assert server.suppressed(text, 1, "XLA805")


def test_noqa_edit_moves_past_a_string_and_never_narrows_a_bare_noqa():
    text = 'x = f("""a\nb""", 1)\ny = 2\n'
    assert server.noqa_edit(text, 1, "XLA805") == (1, 8, 8, "  # noqa: XLA805")
    text = "x = f(1,  # noqa\n      2)\n"
    assert server.noqa_edit(text, 1, "XLA805") == (1, 8, 8, "  # noqa: XLA805")
    assert server.noqa_edit("x = (\n", 1, "XLA805") is None  # does not parse


def test_finding_range_cuts_a_block_at_its_first_line_and_counts_code_points():
    lines = split_lines('for x in "😋😋":  \n    pass\n')
    loop = Result("p", 1, 1, "XLA302", "m", end_line=2, end_col=9)
    assert server.finding_range(lines, loop) == ((0, 0), (0, 14))
    inner = Result("p", 1, 10, "XLA805", "m", end_line=1, end_col=20)  # bytes: the string's 10 bytes
    assert server.finding_range(lines, inner) == ((0, 9), (0, 13))
    assert server.finding_range(lines, Result("p", 2, 3, "E999", "m")) == ((1, 0), (1, 8))
    # lines as the protocol (and ast) count them: a U+2028 or a form feed in a comment ends none
    lines = split_lines("# a\u2028b\x0c\nx = xm.mark_step()\n")
    assert server.finding_range(lines, Result("p", 2, 5, "XLA805", "m", 2, 17)) == ((1, 4), (1, 16))


def test_fixed_text_fixes_only_the_chosen_finding():
    text = ("import torch_xla\nimport torch_xla.core.xla_model as xm\n\nxm.mark_step()\nxm.mark_step()\n")
    resolved = server.resolve(None, {"isolated": True}, None)
    assert server.fixed_text(text, None, resolved, only=lambda f: f.line == 5) == text[:-15] + "torch_xla.sync()\n"
    assert server.fixed_text(text, None, resolved) == "import torch_xla\n\ntorch_xla.sync()\ntorch_xla.sync()\n"
    assert server.fixed_text(text, None, resolved, only=lambda f: False) is None


def test_notebook_module_keeps_each_cell_on_its_lines_and_leaves_magics_out():
    text, pieces, masked = server.notebook_module([
        ("a", 1, "import os\n!ls\nif x:\n    %time f()"), ("b", 2, ""), ("c", 3, "%%bash\nls\n"),
        ("d", 4, "%%timeit -n1\nf()\n")])
    assert text == "import os\npass\nif x:\n    pass\n\n\n\nf()\n"
    assert [(p.uri, p.start, p.end, p.newline_added) for p in pieces] == \
        [("a", 0, 4, True), ("b", 4, 4, False), ("c", 4, 6, False), ("d", 6, 8, False)]
    assert masked == {1, 3, 4, 5, 6}
    assert server.locate(pieces, 7) == (3, 1)


def test_piece_edits_stay_in_one_cell_and_restore_a_cell_end_without_newline():
    _, pieces, masked = server.notebook_module([("a", 1, "x = 1\ny = 2"), ("b", 1, "z = 3\n")])
    old = "x = 1\ny = 2\nz = 3\n"
    assert server.piece_edits(old, "x = 1\ny = 5\nz = 3\n", pieces, masked) == [(0, (1, 0), (1, 5), "y = 5")]
    assert server.piece_edits(old, "x = 1\ny = 2\nw = 0\nz = 3\n", pieces, masked) == [(1, (0, 0), (0, 0), "w = 0\n")]
    assert server.piece_edits(old, "x = 1\nyz = 5\n", pieces, masked) is None  # spans both cells
    assert server.piece_edits(old, old + "v = 1\n", pieces, masked) == [(1, (1, 0), (1, 0), "v = 1\n")]
    _, pieces, masked = server.notebook_module([("a", 1, "x = 1\ny = 2")])
    assert server.piece_edits("x = 1\ny = 2\n", "x = 1\ny = 2\nv = 1\n", pieces, masked) == \
        [(0, (1, 5), (1, 5), "\nv = 1")]
    _, pieces, masked = server.notebook_module([("a", 1, "import os\n%env A=1\nx = os.sep")])
    assert server.piece_edits("import os\npass\nx = os.sep\n", "pass\nx = 1\n", pieces, masked) is None


def test_client_units_follow_the_negotiated_encoding():
    assert [server.client_units('a😋é', enc) for enc in ("utf-16", "utf-8", "utf-32")] == [4, 7, 3]


def test_text_edits_replace_changed_line_runs():
    assert server.text_edits("a\nb\nc\n", "a\nB\nc\nd\n") == [((1, 0), (2, 0), "B\n"), ((3, 0), (3, 0), "d\n")]
    assert server.text_edits("a\nb", "a\nc") == [((1, 0), (1, 1), "c")]


def test_client_values_take_the_cli_keys_and_say_what_they_drop():
    values, problems = server.client_values({"flake8-xla": {
        "xlaScope": "always", "extend_select": "XLA", "per-file-ignores": {"tests/*": ["XLA1"]},
        "xla-version": 2.8, "bogus": 1, "isolated": True, "select": None}})
    assert values == {"xla-scope": "always", "extend-select": "XLA", "per-file-ignores": {"tests/*": ["XLA1"]},
                      "isolated": True}
    assert problems[0] == 'xla-version: expected a string, got float (write the release as a string, e.g. "2.7")'
    assert problems[1].startswith("unknown setting 'bogus' (known: config, exclude, ")
    assert server.client_values(None) == ({}, [])
    assert server.client_values([1]) == ({}, ["settings: expected an object, got list"])


def test_resolve_reads_the_project_config_then_the_client_settings(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "setup.cfg").write_text("[flake8]\nxla-scope = always\nextend-ignore = XLA805\n")
    doc = str(tmp_path / "sub" / "a.py")
    got = server.resolve(doc, {}, tmp_path)
    assert (got.settings.scope, got.selector.reported(doc, "XLA805"), got.excluded, got.settings.docs_url) == \
        ("always", False, False, DEFAULT_DOCS_URL)
    got = server.resolve(doc, {"extend-ignore": [], "exclude": ["sub"], "xla-docs-url": "u/{code}"}, tmp_path)
    assert (got.selector.reported(doc, "XLA805"), got.excluded, got.settings.docs_url) == (True, True, "u/{code}")
    got = server.resolve(doc, {"isolated": True}, tmp_path)
    assert got.settings.scope == "auto"
    assert server.resolve(doc, {"xla-scope": "x"}, tmp_path).error == \
        "client setting xla-scope: invalid value 'x' (choose from 'auto', 'always')"


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("nvim") is None, reason="nvim not installed")
def test_the_neovim_0_7_snippet_of_the_docs_attaches_and_gets_diagnostics(tmp_path):
    """docs/usage.md's snippet for Neovim 0.7 to 0.9 (vim.lsp.start_client +
    buf_attach_client), run in the Neovim found, with this venv's server: one client rooted
    at the project, and the buffer's finding as a diagnostic."""
    usage = (Path(__file__).resolve().parent.parent / "docs" / "usage.md").read_text(encoding="utf-8")
    block = usage.split("Neovim 0.7 to 0.9 have neither", 1)[1]
    lua = re.search(r"```lua\n(.*?)```", block, re.S).group(1)
    assert "vim.lsp.start_client(" in lua and "vim.lsp.buf_attach_client(" in lua
    server_cmd = Path(sys.executable).parent / "flake8-xla"
    (tmp_path / "init.lua").write_text(lua.replace("/path/to/.venv/bin/flake8-xla", str(server_cmd)))
    project = tmp_path / "project"
    (project / "pkg").mkdir(parents=True)
    (project / "setup.cfg").write_text("[flake8]\n")
    (project / "pkg" / "train.py").write_text("import torch_xla.core.xla_model as xm\nxm.mark_step()\n")
    report = ("lua vim.wait(20000, function() return #vim.diagnostic.get(0) > 0 end, 100); "
              "for _, d in ipairs(vim.diagnostic.get(0)) do io.stdout:write(string.format('%d:%d %s\\n', "
              "d.lnum + 1, d.col + 1, d.code or '?')) end; "
              "for _, c in ipairs(vim.lsp.get_active_clients()) do io.stdout:write(c.name .. ' ' .. c.config.root_dir .. '\\n') end")
    proc = subprocess.run(["nvim", "--headless", "-u", str(tmp_path / "init.lua"), "pkg/train.py", "-c", report,
                           "-c", "qa!"], cwd=project, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "config"),
                               "XDG_DATA_HOME": str(tmp_path / "data"), "XDG_STATE_HOME": str(tmp_path / "state")})
    assert proc.stdout.splitlines() == ["2:1 XLA805", f"flake8-xla {project}"], proc.stdout + proc.stderr
