"""How ``flake8-xla --fix`` writes files (issue 22): atomically (a temporary file in the same
folder, fsync, the original's mode, ``os.replace``), never over a file that changed while it
was being fixed, never through a link to a file outside the project root, in the file's own
encoding (BOM and coding cookie kept), and from standard input to standard output. A file
that cannot be read, decoded, encoded or written gets one line on stderr, the others are
still fixed, and the run exits 2 after its usual report. Every test compares exact bytes."""

from __future__ import annotations

import argparse
import io
import os
import resource
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from flake8_xla import __main__ as cli
from flake8_xla import fix
from flake8_xla.fix import fixer
from flake8_xla.settings import Settings

ROOT = Path(__file__).resolve().parent.parent

#: one safe fix (XLA401) and one finding that has no fix (XLA403, line 7 col 12)
SRC = b"import torch\nimport torch_xla\n\n\ndef f(t):\n    t = t.cuda()\n    return torch.compile(t)\n"
FIXED = SRC.replace(b"t.cuda()", b"t.to(torch_xla.device())")
XLA401 = "6:9: XLA401 .cuda() in XLA code; use .to(torch_xla.device())"
XLA403 = "7:12: XLA403 torch.compile without backend= uses inductor in XLA code; pass backend='openxla'"
ENV = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}


def _cli(argv, capsys):
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out.splitlines(), err.splitlines()


def _run(args, cwd, stdin: bytes | None = None, **kw):
    return subprocess.run([sys.executable, "-m", "flake8_xla", *map(str, args)], capture_output=True, cwd=cwd,
                          input=stdin, timeout=300, env=ENV, **kw)


def _files(folder: Path) -> list[str]:
    return sorted(os.listdir(folder))


# -- 1. atomic writes ----------------------------------------------------------------------------

def test_a_full_disk_leaves_the_original_whole_and_the_run_goes_on(tmp_path):
    """A file-size limit (EFBIG, as a full disk or a quota) hit while writing the fixed text of
    a.py: a.py keeps its bytes, no temporary file is left, b.py is still fixed, exit 2."""
    limit = 4096
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    pad = b"# " + b"x" * (limit - len(SRC) - 8) + b"\n"
    a.write_bytes(SRC + pad)  # under the limit; the fix adds 16 bytes, over it
    b.write_bytes(SRC)
    assert len(SRC + pad) < limit < len(FIXED + pad)

    def limited():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the write then fails with EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    proc = _run(["--isolated", "--fix", a, b], tmp_path, preexec_fn=limited)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.decode().splitlines() == [
        f"{a}: not fixed: cannot write it: File too large",
        "flake8-xla: fixed 1 finding, 3 remaining, 1 file skipped",
    ]
    assert proc.stdout.decode().splitlines() == [f"{a}:{XLA401}", f"{a}:{XLA403}", f"{b}:{XLA403}"]
    assert a.read_bytes() == SRC + pad and b.read_bytes() == FIXED
    assert _files(tmp_path) == ["a.py", "b.py"]


KILL_WRAPPER = """
import os, sys, time
marker = sys.argv.pop(1)
real_fsync = os.fsync
def paused_fsync(fd):
    open(marker, "w").close()
    time.sleep(120)
    real_fsync(fd)
os.fsync = paused_fsync
from flake8_xla.__main__ import main
sys.exit(main())
"""


def test_a_run_killed_while_writing_leaves_the_original_whole(tmp_path):
    """SIGKILL after the fixed text went to disk but before the replace: the original is
    whole. (The temporary file stays behind after a SIGKILL: nothing can remove it; it is a
    hidden ``.a.py.*.flake8-xla`` file the walker does not lint.)"""
    path, marker = tmp_path / "a.py", tmp_path / "in-fsync"
    path.write_bytes(SRC)
    proc = subprocess.Popen([sys.executable, "-c", KILL_WRAPPER, str(marker), "--isolated", "--fix", str(path)],
                            cwd=tmp_path, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while not marker.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert marker.exists(), "the fix never reached os.fsync"
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    assert path.read_bytes() == SRC
    left = [name for name in _files(tmp_path) if name not in ("a.py", "in-fsync")]
    assert len(left) == 1 and left[0].startswith(".a.py.") and left[0].endswith(".flake8-xla")
    assert (tmp_path / left[0]).read_bytes() == FIXED


def test_a_replace_that_fails_skips_that_file_only(tmp_path, capsys, monkeypatch):
    """``os.replace`` refused (a read-only folder or file, as root cannot be made to see one):
    the temporary file is removed, the original kept, the next file fixed, exit 2."""
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_bytes(SRC)
    b.write_bytes(SRC)
    real_replace = os.replace

    def replace(src, dst, *args, **kw):
        if os.fspath(dst).endswith("a.py"):
            raise PermissionError(13, "Permission denied")
        return real_replace(src, dst, *args, **kw)

    monkeypatch.setattr(os, "replace", replace)
    code, out, err = _cli(["--isolated", "--fix", str(a), str(b)], capsys)
    assert (code, err) == (2, [f"{a}: not fixed: cannot write it: Permission denied",
                               "flake8-xla: fixed 1 finding, 3 remaining, 1 file skipped"])
    assert out == [f"{a}:{XLA401}", f"{a}:{XLA403}", f"{b}:{XLA403}"]
    assert a.read_bytes() == SRC and b.read_bytes() == FIXED
    assert _files(tmp_path) == ["a.py", "b.py"]


def _without_root() -> list[str] | None:
    """A command prefix that runs the CLI without root's power over file modes: none for a
    user, ``unshare -U`` for root (a user namespace with no mapping keeps the process's
    uid for ownership checks but drops CAP_DAC_OVERRIDE); None when neither works."""
    if os.geteuid() != 0:
        return []
    try:
        ok = subprocess.run(["unshare", "-U", "true"], capture_output=True, timeout=60).returncode == 0
    except (OSError, subprocess.SubprocessError):
        ok = False
    return ["unshare", "-U"] if ok else None


def test_read_only_file_and_folder_are_not_written(tmp_path):
    """A 0o444 file is not replaced though its folder would allow it (as the old in-place
    write refused it); a file in a 0o555 folder cannot get its temporary file."""
    a = tmp_path / "a.py"
    a.write_bytes(SRC)
    a.chmod(0o444)
    locked = tmp_path / "locked"
    locked.mkdir()
    b = locked / "b.py"
    b.write_bytes(SRC)
    c = tmp_path / "c.py"
    c.write_bytes(SRC)
    locked.chmod(0o555)
    prefix = _without_root()
    if prefix is None:
        pytest.skip("root writes read-only files and folders, and unshare -U is not allowed here; "
                    "test_a_replace_that_fails_skips_that_file_only covers the path")
    try:
        proc = subprocess.run([*prefix, sys.executable, "-m", "flake8_xla", "--isolated", "--fix", a, b, c],
                              capture_output=True, cwd=tmp_path, timeout=300, env=ENV)
    finally:
        locked.chmod(0o755)
    assert proc.returncode == 2
    assert proc.stderr.decode().splitlines() == [
        f"{a}: not fixed: cannot write it: Permission denied",
        f"{b}: not fixed: cannot write it: Permission denied",
        "flake8-xla: fixed 1 finding, 5 remaining, 2 files skipped",
    ]
    assert (a.read_bytes(), b.read_bytes(), c.read_bytes()) == (SRC, SRC, FIXED)
    assert _files(tmp_path) == ["a.py", "c.py", "locked"] and _files(locked) == ["b.py"]


@pytest.mark.parametrize("mode", [0o640, 0o755])
def test_the_file_mode_is_kept(tmp_path, capsys, mode):
    path = tmp_path / "a.py"
    path.write_bytes(SRC)
    path.chmod(mode)
    assert _cli(["--isolated", "--fix", str(path)], capsys)[0] == 1
    assert path.read_bytes() == FIXED and stat.S_IMODE(path.stat().st_mode) == mode


def _in_thread(fn, timeout=60):
    """``fn()``'s result, or a failure when it is still running after ``timeout`` seconds."""
    result = []
    worker = threading.Thread(target=lambda: result.append(fn()), daemon=True)
    worker.start()
    worker.join(timeout)
    assert not worker.is_alive(), "still running (blocked on a pipe or reading without end)"
    return result[0]


def test_a_pipe_or_device_is_not_read_by_the_fixer(tmp_path, capsys):
    """A named pipe (as ``<(cat a.py)``), a device, a folder: the fixer cannot write them
    back, so it does not read them either (it opens without waiting for a pipe's writer):
    one line each, exit 2, and the pipe's bytes are left for the report after the fixes.
    Before: the fixer waited for a writer, consumed the pipe (the report then read nothing or
    waited for ever) and read /dev/zero until memory ran out (a MemoryError traceback)."""
    fifo = tmp_path / "a.py"
    os.mkfifo(fifo)
    args = argparse.Namespace(fix=True, diff=False, unsafe_fixes=False)
    out, err = io.StringIO(), io.StringIO()
    paths = [str(fifo), "/dev/zero", os.devnull, str(tmp_path)]
    assert _in_thread(lambda: fix.run(args, paths, Settings(), out=out, err=err)) == fix.Outcome(None, 4)
    assert (out.getvalue(), err.getvalue().splitlines()) == ("", [
        f"{fifo}: not fixed: not a regular file", "/dev/zero: not fixed: not a regular file",
        f"{os.devnull}: not fixed: not a regular file", f"{tmp_path}: not fixed: not a regular file",
        "flake8-xla: fixed 0 findings, 0 remaining, 4 files skipped"])
    # the pipe still holds what its writer wrote: nothing of it was read
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        with open(fifo, "wb") as fh:
            fh.write(SRC)
        assert os.read(reader, 1 << 16) == SRC
    finally:
        os.close(reader)
    assert _cli(["--isolated", "--fix", os.devnull], capsys) == (
        2, [], [f"{os.devnull}: not fixed: not a regular file",
                "flake8-xla: fixed 0 findings, 0 remaining, 1 file skipped"])


# -- 2. changed while it was being fixed -----------------------------------------------------------

def test_a_file_changed_while_it_was_fixed_is_not_overwritten(tmp_path, capsys, monkeypatch):
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_bytes(SRC)
    b.write_bytes(SRC)
    edited = b"# saved by an editor\n" + SRC
    real_fix = fixer.fix_source

    def fix_source(source, *args, **kw):
        if kw.get("path", "").endswith("a.py"):
            a.write_bytes(edited)
        return real_fix(source, *args, **kw)

    monkeypatch.setattr(fixer, "fix_source", fix_source)
    code, out, err = _cli(["--isolated", "--fix", str(a), str(b)], capsys)
    assert (code, err) == (2, [f"{a}: not fixed: changed while it was being fixed",
                               "flake8-xla: fixed 1 finding, 3 remaining, 1 file skipped"])
    assert a.read_bytes() == edited and b.read_bytes() == FIXED
    assert _files(tmp_path) == ["a.py", "b.py"]


def test_same_size_and_time_but_other_bytes_is_a_change(tmp_path, capsys, monkeypatch):
    """An edit that keeps the size and, restored, the mtime is caught by the hash of the bytes."""
    a = tmp_path / "a.py"
    a.write_bytes(SRC)
    edited = SRC.replace(b"def f(t)", b"def g(t)")
    real_fix = fixer.fix_source

    def fix_source(source, *args, **kw):
        st = a.stat()
        a.write_bytes(edited)
        os.utime(a, ns=(st.st_atime_ns, st.st_mtime_ns))
        return real_fix(source, *args, **kw)

    monkeypatch.setattr(fixer, "fix_source", fix_source)
    code, out, err = _cli(["--isolated", "--fix", str(a)], capsys)
    assert (code, err[0]) == (2, f"{a}: not fixed: changed while it was being fixed")
    assert a.read_bytes() == edited


# -- 3. symbolic links ----------------------------------------------------------------------------

def _project(tmp_path, monkeypatch) -> Path:
    proj = tmp_path / "proj"
    (proj / "sub").mkdir(parents=True)
    (proj / "pyproject.toml").write_bytes(b"")
    monkeypatch.chdir(proj / "sub")  # the root is found upwards from the current folder
    return proj


def test_a_link_inside_the_project_fixes_its_target_once(tmp_path, capsys, monkeypatch):
    proj = _project(tmp_path, monkeypatch)
    (proj / "real.py").write_bytes(SRC)
    os.symlink("../real.py", proj / "sub" / "link.py")
    os.symlink(proj / "real.py", proj / "sub" / "link2.py")
    calls = []
    real_fix = fixer.fix_source
    monkeypatch.setattr(fixer, "fix_source", lambda source, *a, **kw: calls.append(kw["path"]) or
                        real_fix(source, *a, **kw))
    code, out, err = _cli(["--isolated", "--fix", "link.py", "link2.py", "../real.py"], capsys)
    assert (code, err) == (1, ["flake8-xla: fixed 1 finding, 1 remaining"])
    assert calls == ["link.py"]
    assert out == [f"link.py:{XLA403}", f"link2.py:{XLA403}", f"../real.py:{XLA403}"]
    assert (proj / "real.py").read_bytes() == FIXED
    assert os.readlink(proj / "sub" / "link.py") == "../real.py"
    assert os.readlink(proj / "sub" / "link2.py") == str(proj / "real.py")
    assert _files(proj) == ["pyproject.toml", "real.py", "sub"]


def test_a_link_to_a_file_outside_the_project_is_not_rewritten(tmp_path, capsys, monkeypatch):
    proj = _project(tmp_path, monkeypatch)
    outside = tmp_path / "shared" / "x.py"
    outside.parent.mkdir()
    outside.write_bytes(SRC)
    os.symlink(outside, proj / "sub" / "x.py")
    (proj / "sub" / "own.py").write_bytes(SRC)
    code, out, err = _cli(["--isolated", "--fix", "."], capsys)
    assert (code, err) == (2, [f"./x.py: not fixed: its target {outside.resolve()} is outside the project "
                               f"root {proj.resolve()}",
                               "flake8-xla: fixed 1 finding, 3 remaining, 1 file skipped"])
    assert out == [f"./own.py:{XLA403}", f"./x.py:{XLA401}", f"./x.py:{XLA403}"]  # linted as before
    assert outside.read_bytes() == SRC and (proj / "sub" / "own.py").read_bytes() == FIXED
    assert os.readlink(proj / "sub" / "x.py") == str(outside)


def test_a_file_through_a_linked_folder_outside_the_project_is_not_rewritten(tmp_path, capsys, monkeypatch):
    """A link on the way (``lnk -> ../outside``), not on the file itself: the file is outside
    the project root all the same. Before, only a link on the last component was checked and
    ``--fix lnk`` rewrote ``outside/x.py``."""
    proj = _project(tmp_path, monkeypatch)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.py").write_bytes(SRC)
    os.symlink(outside, proj / "sub" / "lnk")
    for named in ("lnk", "lnk/x.py"):
        code, out, err = _cli(["--isolated", "--fix", named], capsys)
        assert (code, err) == (2, [f"lnk/x.py: not fixed: its target {(outside / 'x.py').resolve()} is outside "
                                   f"the project root {proj.resolve()}",
                                   "flake8-xla: fixed 0 findings, 2 remaining, 1 file skipped"])
        assert out == [f"lnk/x.py:{XLA401}", f"lnk/x.py:{XLA403}"]
    assert (outside / "x.py").read_bytes() == SRC and _files(outside) == ["x.py"]
    # a linked folder inside the project: its files are fixed through it
    (proj / "pkg").mkdir()
    (proj / "pkg" / "y.py").write_bytes(SRC)
    os.symlink(proj / "pkg", proj / "sub" / "pkglink")
    assert _cli(["--isolated", "--fix", "pkglink"], capsys)[2] == ["flake8-xla: fixed 1 finding, 1 remaining"]
    assert (proj / "pkg" / "y.py").read_bytes() == FIXED and (proj / "sub" / "pkglink").is_symlink()


def test_a_link_does_not_open_excluded_or_ignored_files_to_the_fixer(tmp_path, capsys, monkeypatch):
    """``real.py`` is per-file-ignored and ``vendored/`` excluded; links to them
    (``l1.py -> real.py``, ``sub/v.py -> ../vendored/v.py``) are linted under their own
    names, but the fixer rewrites the target: it now fixes only what the target's own path
    selects too, and not an excluded target at all. Before, both targets were rewritten."""
    proj = _project(tmp_path, monkeypatch)
    monkeypatch.chdir(proj)
    (proj / "vendored").mkdir()
    for p in (proj / "real.py", proj / "vendored" / "v.py", proj / "own.py"):
        p.write_bytes(SRC)
    os.symlink("real.py", proj / "l1.py")
    os.symlink("../vendored/v.py", proj / "sub" / "v.py")
    (proj / "setup.cfg").write_text("[flake8]\nextend-exclude = vendored\nper-file-ignores =\n    real.py: XLA\n")
    code, out, err = _cli(["--fix", "."], capsys)
    assert (code, err) == (2, [f"./sub/v.py: not fixed: its target {(proj / 'vendored' / 'v.py').resolve()} is excluded",
                               "flake8-xla: fixed 1 finding, 5 remaining, 1 file skipped"])
    assert out == [f"./l1.py:{XLA401}", f"./l1.py:{XLA403}", f"./own.py:{XLA403}",
                   f"./sub/v.py:{XLA401}", f"./sub/v.py:{XLA403}"]
    assert (proj / "real.py").read_bytes() == (proj / "vendored" / "v.py").read_bytes() == SRC
    assert (proj / "own.py").read_bytes() == FIXED


def test_a_file_with_hard_links_is_not_split(tmp_path, capsys):
    """``os.replace`` gives the name a new file: its other hard links would keep the old text
    without a word. Such a file is left alone, with a line (Ruff and Black write in place)."""
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_bytes(SRC)
    os.link(a, b)
    code, out, err = _cli(["--isolated", "--fix", str(a)], capsys)
    assert (code, err) == (2, [f"{a}: not fixed: it has 2 hard links; replacing it would split them",
                               "flake8-xla: fixed 0 findings, 2 remaining, 1 file skipped"])
    assert a.read_bytes() == b.read_bytes() == SRC and a.stat().st_ino == b.stat().st_ino
    assert _files(tmp_path) == ["a.py", "b.py"]


def test_a_file_with_the_longest_name_is_fixed(tmp_path, capsys):
    """A 255-byte file name: the temporary file's name, which repeated it, was too long
    (``not fixed: cannot write it: File name too long``)."""
    path = tmp_path / ("é" * 126 + ".py")  # 252 + 3 bytes
    assert len(os.fsencode(path.name)) == 255
    path.write_bytes(SRC)
    assert _cli(["--isolated", "--fix", str(path)], capsys)[2] == ["flake8-xla: fixed 1 finding, 1 remaining"]
    assert path.read_bytes() == FIXED and _files(tmp_path) == [path.name]


def test_the_project_root_is_the_nearest_folder_with_a_marker(tmp_path):
    from flake8_xla.fix import _project_root

    here = tmp_path / "a" / "b"
    here.mkdir(parents=True)
    if any(_has_marker(p) for p in here.parents):
        pytest.skip("a folder above the temporary folder holds a project marker")
    assert _project_root(here) == here  # none: the current folder
    (tmp_path / "a" / "setup.cfg").write_bytes(b"")
    assert _project_root(here) == tmp_path / "a"
    (here / ".git").mkdir()
    assert _project_root(here) == here


def _has_marker(folder: Path) -> bool:
    return any((folder / m).exists() for m in ("pyproject.toml", "setup.cfg", "setup.py", ".git"))


# -- 4. encodings -----------------------------------------------------------------------------------

LATIN1 = (b"# -*- coding: latin-1 -*-\nimport torch\nimport torch_xla\n\n\ndef f(t):\n"
          b"    s = '\xe9\xe9'; t = t.cuda()\n    return torch.compile(t)\n")


def test_a_utf8_bom_is_kept(tmp_path, capsys):
    path = tmp_path / "a.py"
    src = b"\xef\xbb\xbf" + SRC.replace(b"    t = t.cuda()", "    s = 'éé'; t = t.cuda()".encode())
    path.write_bytes(src)
    code, out, err = _cli(["--isolated", "--fix", str(path)], capsys)
    assert (code, err) == (1, ["flake8-xla: fixed 1 finding, 1 remaining"])
    assert path.read_bytes() == src.replace(b"t.cuda()", b"t.to(torch_xla.device())")


def test_a_bom_and_a_utf8_cookie_with_crlf_are_all_kept(tmp_path, capsys):
    path = tmp_path / "a.py"
    src = b"\xef\xbb\xbf# -*- coding: utf-8 -*-\r\n" + SRC.replace(b"\n", b"\r\n")
    path.write_bytes(src)
    code, out, err = _cli(["--isolated", "--fix", str(path)], capsys)
    assert (code, err) == (1, ["flake8-xla: fixed 1 finding, 1 remaining"])
    assert path.read_bytes() == src.replace(b"t.cuda()", b"t.to(torch_xla.device())")


@pytest.mark.parametrize("head,why", [
    # tokenize's own words were "invalid or missing encoding declaration": no byte named
    (b"# caf\xe9\n", "cannot decode it as utf-8: invalid continuation byte at byte 5"),
    (b"\xef\xbb\xbf# caf\xe9\n", "cannot decode it as utf-8: invalid continuation byte at byte 8"),
    # tokenize said "encoding problem: utf-8"
    (b"\xef\xbb\xbf# -*- coding: latin-1 -*-\n",
     "cannot decode it: it has a UTF-8 BOM and a coding cookie naming another encoding"),
])
def test_a_file_python_cannot_decode_is_skipped_with_the_reason_and_counted(tmp_path, capsys, monkeypatch, head, why):
    """``--fix .`` over a fixable file and one whose first lines cannot be decoded: the
    skipped file's line names the byte (or the BOM and cookie), and the summary counts what
    the report shows remaining (before: "0 remaining" under two reported findings) and the
    file as skipped."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ok.py").write_bytes(SRC)
    (tmp_path / "bad.py").write_bytes(head + SRC)
    code, out, err = _cli(["--isolated", "--fix", "."], capsys)
    assert (code, [line.split(" ")[:2] for line in out]) == (
        2, [["./bad.py:7:9:", "XLA401"], ["./bad.py:8:12:", "XLA403"], ["./ok.py:7:12:", "XLA403"]])
    assert err == [f"./bad.py: not fixed: {why}", "flake8-xla: fixed 1 finding, 3 remaining, 1 file skipped"]
    assert (tmp_path / "bad.py").read_bytes() == head + SRC and (tmp_path / "ok.py").read_bytes() == FIXED


def test_a_latin1_file_is_fixed_in_latin1_with_its_cookie(tmp_path, capsys):
    """The fix lands on the right column after a non-ASCII character on the same line, and
    the latin-1 bytes (0xE9, not UTF-8's 0xC3 0xA9) and the cookie are kept."""
    path = tmp_path / "a.py"
    path.write_bytes(LATIN1.replace(b"\n    return", b"; t = t.cuda()\n    return"))
    code, out, err = _cli(["--isolated", "--fix", str(path)], capsys)
    assert (code, err) == (1, ["flake8-xla: fixed 2 findings, 1 remaining"])
    assert path.read_bytes() == (b"# -*- coding: latin-1 -*-\nimport torch\nimport torch_xla\n\n\ndef f(t):\n"
                                 b"    s = '\xe9\xe9'; t = t.to(torch_xla.device()); t = t.to(torch_xla.device())\n"
                                 b"    return torch.compile(t)\n")
    assert out == [f"{path}:8:12: XLA403 torch.compile without backend= uses inductor in XLA code; "
                   "pass backend='openxla'"]


@pytest.mark.parametrize("newline", ["\n", "\r\n"], ids=["lf", "crlf"])
@pytest.mark.parametrize("encoding,sample", [
    (None, "é"), ("utf-8-sig", "é"), ("latin-1", "é"), ("cp1252", "€"), ("shift_jis", "日本"), ("euc_kr", "한"),
], ids=["utf-8", "utf-8-bom", "latin-1", "cp1252", "shift_jis", "euc_kr"])
def test_every_byte_the_fix_does_not_touch_is_kept(tmp_path, capsys, encoding, sample, newline):
    """Non-ASCII text before the fixed call on its line, in a comment and in a docstring, in
    the file's encoding (a cookie, or a BOM for utf-8-sig), with LF or CRLF line ends."""
    cookie = f"# -*- coding: {encoding} -*-\n" if encoding not in (None, "utf-8-sig") else ""
    text = (f'{cookie}"""{sample}."""\nimport torch\nimport torch_xla  # {sample}\n\n\ndef f(t):\n'
            f'    s = "{sample}"; t = t.cuda()\n    return torch.compile(t)  # {sample}\n').replace("\n", newline)
    src = text.encode(encoding or "utf-8")
    path = tmp_path / "a.py"
    path.write_bytes(src)
    code, out, err = _cli(["--isolated", "--fix", str(path)], capsys)
    assert (code, err) == (1, ["flake8-xla: fixed 1 finding, 1 remaining"])
    assert path.read_bytes() == src.replace(b"t.cuda()", b"t.to(torch_xla.device())")


def test_a_latin1_file_lints_with_flake8s_columns(tmp_path, capsys):
    """Columns count the UTF-8 bytes of the decoded line, as flake8 counts them."""
    path = tmp_path / "a.py"
    path.write_bytes(LATIN1)
    code, out, err = _cli(["--isolated", str(path)], capsys)
    assert (code, err) == (1, [])
    assert out == [f"{path}:7:21: XLA401 .cuda() in XLA code; use .to(torch_xla.device())",
                   f"{path}:8:12: XLA403 torch.compile without backend= uses inductor in XLA code; "
                   "pass backend='openxla'"]


def test_a_fix_the_encoding_cannot_hold_skips_the_file(tmp_path, capsys, monkeypatch):
    path = tmp_path / "a.py"
    path.write_bytes(LATIN1)
    real_fix = fixer.fix_source

    def fix_source(source, *args, **kw):
        result = real_fix(source, *args, **kw)
        result.source = result.source.replace("import torch\n", "import torch  # €\n")
        return result

    monkeypatch.setattr(fixer, "fix_source", fix_source)
    code, out, err = _cli(["--isolated", "--fix", str(path)], capsys)
    assert (code, err) == (2, [f"{path}: not fixed: the fixed text cannot be encoded as iso-8859-1 ('\\u20ac')",
                               "flake8-xla: fixed 0 findings, 2 remaining, 1 file skipped"])
    assert path.read_bytes() == LATIN1


def test_a_file_that_cannot_be_decoded_says_so(tmp_path, capsys):
    """Not a silent "fixed 0 findings": a UTF-8 file (no cookie) with a latin-1 byte."""
    path = tmp_path / "a.py"
    src = SRC + b"# caf\xe9\n"
    path.write_bytes(src)
    at = src.index(b"\xe9")
    code, out, err = _cli(["--isolated", "--fix", str(path)], capsys)
    assert (code, err) == (2, [f"{path}: not fixed: cannot decode it as utf-8: invalid continuation byte "
                               f"at byte {at}", "flake8-xla: fixed 0 findings, 2 remaining, 1 file skipped"])
    assert path.read_bytes() == src


@pytest.mark.parametrize("cookie,why", [
    ("unicode_escape", "decoding and encoding it as unicode_escape does not give its bytes back"),
    ("hex", "cannot decode it as hex: 'hex' is not a text encoding; use codecs.decode() to handle arbitrary codecs"),
    ("undefined", "cannot decode it as undefined: decoding with 'undefined' codec failed (UnicodeError: "
                  "undefined encoding)"),
])
def test_a_codec_that_would_change_other_bytes_is_not_used(tmp_path, capsys, cookie, why):
    """``unicode_escape`` decodes ``"\\x41"`` to ``"A"``: encoding the fixed text would rewrite
    it. Codecs that are not text encodings raise other errors than UnicodeDecodeError."""
    path = tmp_path / "a.py"
    src = f"# coding: {cookie}\n".encode() + SRC.replace(b"import torch\n", b"import torch\ns = 'a\\x41'\n")
    path.write_bytes(src)
    code, out, err = _cli(["--isolated", "--fix", str(path)], capsys)
    assert (code, err[0]) == (2, f"{path}: not fixed: {why}")
    assert path.read_bytes() == src


def test_a_cookie_naming_a_codec_that_is_not_a_text_encoding_lints_as_e902(tmp_path, capsys):
    path = tmp_path / "a.py"
    path.write_bytes(b"# coding: hex\n" + SRC)
    assert _cli(["--isolated", str(path)], capsys) == (1, [
        f"{path}:1:1: E902 LookupError: 'hex' is not a text encoding; use codecs.open() to handle arbitrary codecs"], [])


def test_diff_of_a_latin1_file_and_an_undecodable_one(tmp_path, capsys):
    good, bad = tmp_path / "a.py", tmp_path / "b.py"
    good.write_bytes(LATIN1)
    bad.write_bytes(b"# coding: klingon\n" + SRC)
    code, out, err = _cli(["--isolated", "--diff", str(good), str(bad)], capsys)
    assert code == 2
    assert out == [f"--- {good}", f"+++ {good}", "@@ -4,5 +4,5 @@", " ", " ", " def f(t):",
                   "-    s = 'éé'; t = t.cuda()", "+    s = 'éé'; t = t.to(torch_xla.device())",
                   "     return torch.compile(t)"]
    assert err == [f"{bad}: not fixed: cannot decode it: unknown encoding: klingon",
                   "flake8-xla: would fix 1 finding, 1 would remain, 1 file skipped"]
    assert (good.read_bytes(), bad.read_bytes()) == (LATIN1, b"# coding: klingon\n" + SRC)


# -- 5. standard input --------------------------------------------------------------------------------

def test_fix_stdin_prints_the_fixed_source_and_reports_on_stderr(tmp_path):
    proc = _run(["--isolated", "--fix", "-"], tmp_path, stdin=SRC)
    assert (proc.returncode, proc.stdout) == (1, FIXED)
    assert proc.stderr.decode().splitlines() == [f"stdin:{XLA403}", "flake8-xla: fixed 1 finding, 1 remaining"]
    clean = SRC.replace(b"    return torch.compile(t)\n", b"    return t\n")
    proc = _run(["--isolated", "--fix", "--stdin-filename", "pkg/train.py", "-"], tmp_path, stdin=clean)
    assert (proc.returncode, proc.stdout) == (0, clean.replace(b"t.cuda()", b"t.to(torch_xla.device())"))
    assert proc.stderr.decode().splitlines() == ["flake8-xla: fixed 1 finding, 0 remaining"]


def test_fix_stdin_keeps_its_encoding_and_names_it(tmp_path):
    proc = _run(["--isolated", "--fix", "--stdin-filename", "train.py"], tmp_path, stdin=LATIN1)
    assert (proc.returncode, proc.stdout) == (1, LATIN1.replace(b"t.cuda()", b"t.to(torch_xla.device())"))
    assert proc.stderr.decode().splitlines() == [
        "train.py:8:12: XLA403 torch.compile without backend= uses inductor in XLA code; pass backend='openxla'",
        "flake8-xla: fixed 1 finding, 1 remaining"]


def test_fix_stdin_that_cannot_be_decoded_is_echoed(tmp_path):
    src = SRC + b"# caf\xe9\n"
    proc = _run(["--isolated", "--fix", "-"], tmp_path, stdin=src)
    assert (proc.returncode, proc.stdout) == (2, src)
    assert proc.stderr.decode().splitlines()[0] == ("stdin: not fixed: cannot decode it as utf-8: "
                                                    f"invalid continuation byte at byte {len(SRC) + 5}")


def test_fix_stdin_excluded_is_echoed_unchanged(tmp_path):
    proc = _run(["--isolated", "--fix", "--extend-exclude", "x.py", "--stdin-filename", "vendored/x.py", "-"],
                tmp_path, stdin=SRC)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, SRC, b"")


def test_fix_stdin_with_other_paths_is_a_usage_error(tmp_path):
    (tmp_path / "a.py").write_bytes(SRC)
    proc = _run(["--isolated", "--fix", "-", "a.py"], tmp_path, stdin=SRC)
    assert (proc.returncode, proc.stdout) == (2, b"")
    assert proc.stderr.decode().splitlines() == [
        "flake8-xla: error: --fix with - (standard input) prints the fixed text: name no other path"]
    assert (tmp_path / "a.py").read_bytes() == SRC


def test_fix_stdin_reports_what_remains_with_lines_as_flake8_reads_them(tmp_path):
    """What remains after ``--fix -`` is linted from lines split as Python splits them: a
    form feed in a comment moved every later line by one with ``str.splitlines``, so the
    ``# noqa`` below was not seen (a suppressed finding reported, exit 1)."""
    src = SRC.replace(b"\n\n\ndef", b"\n# page\x0cbreak\n\ndef").replace(
        b"return torch.compile(t)\n", b"return torch.compile(t)  # noqa: XLA403\n")
    proc = _run(["--isolated", "--fix", "-"], tmp_path, stdin=src)
    assert (proc.returncode, proc.stdout) == (0, src.replace(b"t.cuda()", b"t.to(torch_xla.device())"))
    assert proc.stderr.decode().splitlines() == ["flake8-xla: fixed 1 finding, 0 remaining"]


def test_stdin_with_cr_line_ends_honours_noqa_as_flake8_does(tmp_path):
    """Standard input is split with universal newlines, as flake8 reads it: with ``\r``
    line ends it was one line, so no ``# noqa`` applied. (Both CLIs agree now.)"""
    src = SRC.replace(b"t.cuda()", b"t.cuda()  # noqa").replace(b"\n", b"\r")
    (tmp_path / "a.py").write_bytes(src)
    expected = ["7:12: XLA403 torch.compile without backend= uses inductor in XLA code; pass backend='openxla'"]
    proc = _run(["--isolated", "-"], tmp_path, stdin=src)
    assert (proc.returncode, proc.stdout.decode().splitlines()) == (1, ["stdin:" + e for e in expected])
    proc = _run(["--isolated", "a.py"], tmp_path)
    assert (proc.returncode, proc.stdout.decode().splitlines()) == (1, ["a.py:" + e for e in expected])


def test_diff_stdin(tmp_path):
    proc = _run(["--isolated", "--diff", "--stdin-filename", "train.py", "-"], tmp_path, stdin=SRC)
    assert proc.returncode == 1
    assert proc.stdout.decode().splitlines() == [
        "--- train.py", "+++ train.py", "@@ -3,5 +3,5 @@", " ", " ", " def f(t):", "-    t = t.cuda()",
        "+    t = t.to(torch_xla.device())", "     return torch.compile(t)"]
    assert proc.stderr.decode().splitlines() == ["flake8-xla: would fix 1 finding, 1 would remain"]
    assert _run(["--isolated", "--diff", "-"], tmp_path, stdin=FIXED).returncode == 0


# -- 6. the summary ----------------------------------------------------------------------------------

def test_summary_counts_every_file_not_written(tmp_path, capsys, monkeypatch):
    paths = [tmp_path / f"{n}.py" for n in "abc"]
    for p in paths:
        p.write_bytes(SRC)

    def refuse(src, dst, *args, **kw):
        raise OSError(122, "Disk quota exceeded")

    monkeypatch.setattr(os, "replace", refuse)
    code, out, err = _cli(["--isolated", "--fix", *map(str, paths)], capsys)
    assert (code, err) == (2, [f"{p}: not fixed: cannot write it: Disk quota exceeded" for p in paths]
                           + ["flake8-xla: fixed 0 findings, 6 remaining, 3 files skipped"])
    assert [p.read_bytes() for p in paths] == [SRC] * 3 and _files(tmp_path) == ["a.py", "b.py", "c.py"]


def test_the_summary_counts_what_the_lint_then_reports(tmp_path):
    # the fixer linted each file alone, so a finding of project mode (a helper that another
    # module's launched code runs) and a file that does not parse (E999) were printed by the
    # lint after the fixes but missing from "N remaining"
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "helper.py").write_text('import torch\n\n\ndef save(model):\n    torch.save(model.state_dict(), "m.pt")\n')
    (tmp_path / "main.py").write_text(
        "import torch\nimport torch_xla\nfrom helper import save\n\n\ndef run(index):\n"
        "    model = torch.nn.Linear(2, 2).to(torch_xla.device())\n    save(model)\n\n\ntorch_xla.launch(run)\n")
    (tmp_path / "syn.py").write_text("def f(:\n")
    proc = _run(["--fix", "helper.py", "syn.py"], tmp_path)
    out, err = proc.stdout.decode(), proc.stderr.decode()
    assert [line.split(" ")[:2] for line in out.splitlines()] == [["helper.py:5:5:", "XLA601"], ["syn.py:1:8:", "E999"]]
    assert err == "flake8-xla: fixed 0 findings, 2 remaining\n"
    assert proc.returncode == 1
    proc = _run(["--diff", "helper.py"], tmp_path)
    assert proc.stderr.decode() == "flake8-xla: would fix 0 findings, 1 would remain\n"
    assert proc.returncode == 0
