"""Autofix for the standalone CLI: ``flake8-xla --fix`` / ``--diff`` / ``--unsafe-fixes``.

This package's top level never imports LibCST: it holds what the CLI and the docs need
(the options, each rule's applicability, the text of its docs line). The rewriting itself
(``flake8_xla.fix.fixer``, on LibCST, an optional extra: ``pip install 'flake8-xla[fix]'``)
is imported only when ``--fix`` or ``--diff`` is given, so the flake8 and pylint plugins
stay dependency-free.

Conventions follow Ruff's: ``--fix`` rewrites files in place (atomically, in their own
encoding: :func:`write_atomic`, :func:`decode`) and the CLI then reports what remains
(``--fix -``: the fixed standard input on stdout, what remains on stderr); ``--diff``
prints a unified diff, writes nothing and exits 1 when there is a diff;
``--unsafe-fixes`` also applies the fixes that may change behaviour beyond the finding.
Each rule declares its applicability in its class (``Rule.fix_applicability``: ``"safe"``,
``"unsafe"`` or ``"none"``); what the fix does is described in ``FIX_DOCS`` below.
"""

from __future__ import annotations

import codecs
import contextlib
import dataclasses
import difflib
import io
import os
import shutil
import stat
import sys
import tempfile
import tokenize
from pathlib import Path
from typing import Callable, Iterable

from ..cli.files import STDIN
from ..notebook import is_notebook
from ..project.files import read_regular, root_from

SAFE, UNSAFE, NONE = "safe", "unsafe", "none"
APPLICABILITIES = (SAFE, UNSAFE, NONE)
#: how to get LibCST (the ``fix`` extra holds only it; the package may be installed from a clone)
PIP_COMMAND = "pip install libcst (the fix extra)"

#: What each rule's fix does (the rule's docs page shows it after its applicability).
FIX_DOCS = {
    "XLA001": "drops `nprocs=` (keyword or third positional argument) from `xmp.spawn`; a "
              "count that is not an integer literal (it may be 1 on purpose) is dropped only "
              "with `--unsafe-fixes`",
    "XLA002": "`mp.spawn(fn, args=..., nprocs=...)` -> `torch_xla.launch(fn, args=...)` (`xmp.spawn(fn, "
              "args=...)` before torch_xla 2.5): unsafe, the runtime now decides the process count; "
              "`import torch.multiprocessing as mp` goes when nothing else uses it",
    "XLA101": "adds `gradient_as_bucket_view=True` to the `DistributedDataParallel(...)` call "
              "(or turns a literal `False` into `True`)",
    "XLA102": "drops `device_ids=` and `output_device=` from the `DistributedDataParallel(...)` "
              "call (a positional one followed by more positional arguments becomes `None`)",
    "XLA103": '`init_process_group("gloo", rank=r, world_size=n)` -> `init_process_group("xla", '
              'init_method="xla://")` (with `import torch_xla.distributed.xla_backend` for torch_xla '
              "2.1-2.4, `pjrt://` for 2.0), and a `MASTER_ADDR` / `MASTER_PORT` assignment statement is "
              "dropped: unsafe, the rendezvous now comes from the runtime; a backend in a variable or "
              "`os.environ.update({...})` needs a human",
    "XLA104": 'adds `init_method="xla://"` (`pjrt://` with `import torch_xla.experimental.pjrt_backend` '
              "for torch_xla 2.0) and drops `rank=` / `world_size=`, which the XLA rendezvous ignores",
    "XLA106": 'rewrites the literal `init_method="pjrt://"` to `"xla://"`',
    "XLA109": '`os.environ["RANK"]` / `["WORLD_SIZE"]` / `["LOCAL_RANK"]` / `["LOCAL_WORLD_SIZE"]` '
              "(also `.get` and `os.getenv`) -> `xr.global_ordinal()` / `xr.world_size()` / "
              "`xr.local_ordinal()` / `xr.local_process_count()`, a literal `world_size=` / "
              "`num_replicas=` -> `xr.world_size()`: unsafe, the value is now an int (it was a string) "
              "and the runtime's count",
    "XLA110": "`torch.cuda.device_count()` -> `xr.world_size()` (`xm.xrt_world_size()` before 2.1) in "
              "launched code or a script without a multi-process launch; in the launching process (the runtime "
              "must not start before the launch) and under SPMD (devices or hosts?) the finding stays",
    "XLA201": "`optimizer.step()` -> `xm.optimizer_step(optimizer)`; when a clip precedes the step, "
              "`xm.reduce_gradients(optimizer)` before the clip instead (XLA203): unsafe, the replicas now "
              "average their gradients before the step (or wrap the model in DDP instead)",
    "XLA203": "`clip_grad_norm_(...); xm.optimizer_step(opt)` -> `xm.reduce_gradients(opt); "
              "clip_grad_norm_(...); opt.step()` (the step in the clip's block, with no argument but the "
              "optimizer): unsafe, the clip now sees the averaged gradients",
    "XLA301": "`for x in loader:` -> `for x in pl.MpDeviceLoader(loader, device):` (inside `enumerate()` / "
              "`tqdm()` too, and `pbar = tqdm(loader)` -> `pbar = tqdm(pl.MpDeviceLoader(loader, device))`, so "
              "the bar still counts the steps; for a loader passed to a training function, that function's "
              "loop, when every loader reaching it is a plain one: the function may read `loader.sampler`), "
              "with the device variable in scope (a class's `self.device` too), else the device the loop "
              "moves its batches to, else `torch_xla.device()`; the loop's now redundant `x = x.to(device)` "
              "goes and `x.to(device)` becomes `x`: unsafe, the batches now arrive on the device and the "
              "graph is cut per batch; `next(iter(loader))` needs a human",
    "XLA303": "binds `sampler = DistributedSampler(ds, num_replicas=xr.world_size(), rank=xr.global_ordinal(), "
              "shuffle=...)` before the loader's statement (its `shuffle=` moves to the sampler) and passes "
              "`sampler=sampler`; a `RandomSampler(ds)` / `SequentialSampler(ds)` becomes that sampler; a "
              "`DistributedSampler(ds)` gets the two arguments; a bound sampler gets `sampler.set_epoch(epoch)` "
              "at the top of the epoch loop (`for epoch in ...:` around the loader, or after it iterating or "
              "passing it on): unsafe, each replica now reads its own share; an inline sampler's "
              "`set_epoch` is yours to call",
    "XLA304": "adds `drop_last=True` to the `DataLoader(...)` call: unsafe, the last samples of "
              "every epoch are no longer seen",
    "XLA306": "`pl.ParallelLoader(loader, [dev]).per_device_loader(dev)` -> `pl.MpDeviceLoader(loader, dev)`; "
              "`para = pl.ParallelLoader(loader, [dev])` -> `para = pl.MpDeviceLoader(loader, dev)` with each "
              "`para.per_device_loader(dev)` of its function -> `para` (one device, the same device asked "
              "everywhere; other keywords kept)",
    "XLA404": "adds `model.to(device)` right after `model = ...` (the device variable bound before it, "
              "a class's `self.device`, else `torch_xla.device()`): unsafe, the module and what it computes "
              "move to the device",
    "XLA405": "moves the optimizer's assignment statement to just after the statement that moves the "
              "module, when nothing between uses the optimizer or rebinds a name its constructor reads "
              "and the constructor itself calls `.parameters()` (a list collected before it keeps the old ones) "
              "(moving the module up instead could move it before code that expects it on the CPU, such "
              "as a weight tie): unsafe, code between no longer sees the optimizer",
    "XLA401": "`.cuda()` -> `.to(torch_xla.device())`, `.to(\"cuda\")` / `device=\"cuda\"` / "
              "`torch.device(\"cuda\")` -> the XLA device (in `\"cuda\" if flag else \"cpu\"` the CUDA "
              "branch only; a `torch.cuda.is_available()` test goes too), `torch.cuda.synchronize()` -> "
              "`torch_xla.sync(wait=True)`, a `torch.cuda.set_device(...)` / `empty_cache()` "
              "statement is dropped; a device held in a variable and `map_location` need a human",
    "XLA402": "`.to(rank)`, `device=rank`, `xm.xla_device(i)`, `torch_xla.device(n)`, "
              "`torch.device(\"xla\", rank)`, `f\"xla:{rank}\"` -> `torch_xla.device()` "
              "(`xm.xla_device()` before torch_xla 2.3)",
    "XLA406": "adds `import torch_xla` (for its side effect: it registers the `xla` device) with the module's "
              "imports; unsafe, the module now needs torch_xla installed to import at all (a CPU run that never "
              "takes the `\"xla\"` branch did not)",
    "XLA508": "appends `torch_xla.sync()` (`xm.mark_step()` before torch_xla 2.4) as the loop body's last "
              "statement; a body with a `continue` of this loop, or ending in `break` / `return` / `raise`, needs "
              "a human",
    "XLA605": "inserts `torch_xla.sync()` (`xm.mark_step()` before torch_xla 2.4) on its own line just before "
              "the statement of the save, in its block (under a step gate: only when it saves); a save inside "
              "a larger expression needs a human",
    "XLA706": "`torch.float16` / `torch.half` -> `torch.bfloat16`, `\"float16\"` -> `\"bfloat16\"`, "
              "`x.half()` -> `x.bfloat16()`: unsafe, bfloat16 keeps 8 bits of mantissa where float16 has 11, "
              "and code that expects float16 (a loss scaler, an fp16 checkpoint read elsewhere) changes; a "
              "dtype held in a name needs a human",
    "XLA906": "moves the `xr.use_spmd()` statement to just before the statement of its block that "
              "started the runtime (the call alone on its line, literal arguments): unsafe, the code "
              "between now runs under SPMD; a start in a helper's caller or another block needs a human",
    "XLA909": "`x = xs.mark_sharding(x, mesh, spec)` -> `xs.mark_sharding(x, mesh, spec)` (the statement is the "
              "assignment alone, its target the call's first argument as written): unsafe, `x` stays the annotated "
              "tensor, so code after it that reads the wrapper's own attributes (`x.local_shards`) needs a human",
    "XLA801": "`xm.xrt_world_size()` -> `xr.world_size()` (adds `import torch_xla.runtime as xr` or reuses "
              "the module's alias; removes the import it left unused)",
    "XLA802": "`xm.get_ordinal()` -> `xr.global_ordinal()` (imports managed as for XLA801)",
    "XLA803": "`xm.parse_xla_device(d)` -> `torch_xla._internal.utils.parse_xla_device(d)`, the "
              "function the alias called (same result; private: prefer rewriting it by hand; no public "
              "call gives the same: it parses hardware names, `(\"TPU\", 0)` for `\"TPU:0\"` and None for "
              "`\"xla:0\"`, where `torch.device(d).index` raises on `\"TPU:0\"` and returns an int)",
    "XLA804": "`xm.xla_device(...)` / `xr.xla_device(...)` -> `torch_xla.device(...)` (`n=` becomes "
              "`index=`; `devkind=`, ignored from 2.8, is dropped)",
    "XLA805": "`xm.mark_step(...)` -> `torch_xla.sync(...)` (same arguments)",
    "XLA806": "`pjrt.world_size()`, `global_ordinal()`, `local_ordinal()`, `device_type()` and the "
              "device counts -> `xr.` (`torch_xla.runtime`), `pjrt.xla_device()` -> `torch_xla.device()`, "
              "`pjrt.broadcast_master_param` -> `xm.`; the import goes once nothing uses it",
    "XLA807": "rewrites the import to `torch_xla.distributed.spmd` when every name used from it "
              "exists there in the target release",
    "XLA808": "`torch_xla.experimental.compile(fn)` -> `torch_xla.compile(fn)`",
}


def applicability(code: str) -> str:
    """``"safe"``, ``"unsafe"`` or ``"none"``: the rule's ``fix_applicability``."""
    from ..registry import all_rules

    cls = all_rules().get(code)
    return getattr(cls, "fix_applicability", NONE) if cls is not None else NONE


def fix_doc(code: str) -> str:
    """The docs line of a rule's fix: ``Fix: safe (flake8-xla --fix): drops ...`` or ``Fix: none``."""
    kind = applicability(code)
    if kind == NONE:
        return "Fix: none"
    how = "`flake8-xla --fix`" if kind == SAFE else "`flake8-xla --fix --unsafe-fixes`"
    return f"Fix: {kind} ({how}): {FIX_DOCS[code]}"


def add_arguments(parser) -> None:
    """The fix options of the standalone CLI."""
    group = parser.add_argument_group("fixing (needs LibCST: " + PIP_COMMAND + ")")
    group.add_argument("--fix", action="store_true",
                       help="apply the safe fixes in place, then report what remains (exit 2 when a file "
                            "could not be written); with -, print the fixed standard input")
    group.add_argument("--diff", action="store_true",
                       help="print the fixes as a unified diff and change nothing (exit 1 when there is a diff)")
    group.add_argument("--unsafe-fixes", action="store_true",
                       help="with --fix/--diff, also apply the fixes that may change behaviour")
    group.add_argument("--show-fixes", action="store_true",
                       help="with --fix/--diff, list what was fixed, per file and code (on stderr)")


def requested(args) -> bool:
    return bool(getattr(args, "fix", False) or getattr(args, "diff", False))


def unified_diff(old: str, new: str, name: str, context: int = 3) -> str:
    """A unified diff like ``diff -u`` (difflib's own treats frequent lines, such as blank
    ones, as junk and shows them moved)."""
    from ..lines import split_lines

    a, b = split_lines(old), split_lines(new)
    out = []
    for group in difflib.SequenceMatcher(None, a, b, autojunk=False).get_grouped_opcodes(context):
        if not out:
            out += [f"--- {name}\n", f"+++ {name}\n"]
        first, last = group[0], group[-1]
        out.append(f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@\n")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out += [" " + line for line in a[i1:i2]]
                continue
            out += ["-" + line for line in a[i1:i2]]
            out += ["+" + line for line in b[j1:j2]]
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in out)


def _range(start: int, stop: int) -> str:
    length = stop - start
    return f"{start + 1 if length else start},{length}" if length != 1 else f"{start + 1}"


@dataclasses.dataclass
class Outcome:
    """What :func:`run` did. ``status``: exit now with it (LibCST missing, ``--diff``, a failed
    ``--fix -``), or None: the CLI lints for what remains. ``not_written``: files ``--fix``
    could not write (each had its line on stderr; the CLI exits 2 after its report).
    ``stdin_text``: after ``--fix -``, the fixed text, already on ``out`` (the CLI reports its
    findings on stderr)."""

    status: int | None
    not_written: int = 0
    stdin_text: str | None = None
    fixed: int = 0  # findings the written fixes removed
    cuda: int = 0  # CUDA scripts the rules skipped (--xla-scope=auto)

    def summary(self, remaining: int) -> str:
        """The last line of ``--fix``: ``flake8-xla: fixed N findings, M remaining, K files
        skipped`` (``remaining``: what the lint after the fixes reports; only the fixes
        written count as fixed; a file not written is skipped)."""
        return (f"flake8-xla: fixed {_plural(self.fixed, 'finding')}, {remaining} remaining"
                + (f", {_plural(self.not_written, 'file')} skipped" if self.not_written else "")
                + _cuda_note(self.cuda) + "\n")


def _cuda_note(cuda: int) -> str:
    return f", {_plural(cuda, 'CUDA file')} skipped (--xla-scope=always ports it)" if cuda else ""


class NotFixed(Exception):
    """Why one file was left as it was: the text after ``path: not fixed: ``."""


CHANGED = "changed while it was being fixed"
NOT_REGULAR = "not a regular file"
#: the longest file name (in bytes) the temporary file's name repeats: 1 + 200 + 1 + 8
#: random characters + ".flake8-xla" stays under NAME_MAX (255 bytes on Linux and macOS)
_NAME_IN_TMP = 200


def _project_root(cwd: Path | None = None) -> Path:
    """The project root of the current folder (or ``cwd``), as project mode finds it
    (:func:`flake8_xla.project.files.root_from`: the nearest folder up holding
    ``pyproject.toml``, ``setup.cfg``, ``setup.py`` or ``.git``, else that folder).
    ``--fix`` rewrites a link's target only inside it."""
    return root_from(Path.cwd() if cwd is None else cwd)


def decode(data: bytes) -> tuple[str, str]:
    """(text, encoding) of a module's bytes, decoded as Python decodes them
    (``tokenize.detect_encoding``: a BOM, else the coding cookie, else UTF-8). The text has
    no BOM; ``encoding`` is ``utf-8-sig`` when there was one, so encoding the text with it
    puts the BOM back. Raises :class:`NotFixed` (why) when the bytes cannot be decoded."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:  # an unknown encoding, a cookie that contradicts the BOM
        raise NotFixed(_undetected(data, exc.msg)) from None
    try:
        return data.decode(encoding), encoding
    except UnicodeDecodeError as exc:
        raise NotFixed(f"cannot decode it as {encoding}: {exc.reason} at byte {exc.start}") from None
    except (LookupError, UnicodeError, ValueError, TypeError) as exc:  # `# coding: hex`, `undefined`
        raise NotFixed(f"cannot decode it as {encoding}: {exc}") from None


def _undetected(data: bytes, why: str) -> str:
    """Why ``tokenize.detect_encoding`` refused ``data`` (its own words, ``invalid or
    missing encoding declaration``, name no byte): a first or second line that is not UTF-8
    says which byte, a BOM under another encoding's cookie says both."""
    bom = data.startswith(codecs.BOM_UTF8)
    if why.startswith("encoding problem"):  # `encoding problem: utf-8`: a BOM, and a cookie naming another
        return "cannot decode it: it has a UTF-8 BOM and a coding cookie naming another encoding"
    try:
        data.decode("utf-8-sig" if bom else "utf-8")
    except UnicodeDecodeError as exc:
        at = exc.start + (len(codecs.BOM_UTF8) if bom else 0)
        return f"cannot decode it as utf-8: {exc.reason} at byte {at}"
    return f"cannot decode it: {why}"


def encode(text: str, encoding: str) -> bytes:
    """``text`` in the file's ``encoding`` (from :func:`decode`). Raises :class:`NotFixed`
    when a fix introduced a character the encoding cannot hold."""
    try:
        return text.encode(encoding)
    except UnicodeEncodeError as exc:
        raise NotFixed(f"the fixed text cannot be encoded as {encoding} ({ascii(exc.object[exc.start:exc.end])})") \
            from None
    except (LookupError, UnicodeError, ValueError, TypeError) as exc:
        raise NotFixed(f"the fixed text cannot be encoded as {encoding}: {exc}") from None


def _round_trips(text: str, encoding: str, data: bytes) -> None:
    """Raises :class:`NotFixed` unless encoding ``text`` (``data`` decoded) gives ``data``
    back: a codec that does not (``unicode_escape``, a stateful one that spells the same
    text otherwise) would rewrite what no fix touched."""
    try:
        same = text.encode(encoding) == data
    except (LookupError, UnicodeError, ValueError, TypeError):
        same = False
    if not same:
        raise NotFixed(f"decoding and encoding it as {encoding} does not give its bytes back")


@dataclasses.dataclass
class _Read:
    data: bytes
    stat: os.stat_result


def _read(path) -> _Read:
    """The bytes of the file at ``path``, with its stat at the time they were read. Raises
    :class:`NotFixed` when it cannot be read or is not a regular file: a pipe, a device or a
    folder is not read at all (it cannot be written back; reading ``/dev/zero`` would not end,
    and a pipe read here would be empty for the report after the fixes), and opening does
    not wait for a pipe's writer."""
    try:
        data, st = read_regular(path)
    except OSError as exc:
        raise NotFixed(f"cannot read it: {exc.strerror or exc}") from None
    if data is None:
        raise NotFixed(NOT_REGULAR)
    return _Read(data, st)


def _changed(real: Path, read: _Read) -> bool:
    """Did ``real`` change since it was read (another inode, size, mtime, or other bytes)?"""
    try:
        st = os.stat(real)
        if (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns) != \
                (read.stat.st_dev, read.stat.st_ino, read.stat.st_size, read.stat.st_mtime_ns):
            return True
        with open(real, "rb") as fh:
            return fh.read() != read.data
    except FileNotFoundError:
        return True


def write_atomic(real: Path, data: bytes, read: _Read) -> None:
    """Replace the regular file ``real`` (a resolved path, never a link) with ``data``: a
    temporary file in the same folder gets the bytes, is flushed and fsynced and takes the
    file's mode (and, where allowed, owner), then ``os.replace`` puts it in place; a crash
    leaves either the old file or the new one, whole. A file its user may not write is not
    replaced even when its folder allows it. Raises :class:`NotFixed` when ``real`` is not a
    regular file (a pipe, a device), has other hard links (the replace would leave them the
    old text) or changed since ``read``, ``OSError`` when a step fails;
    either way the temporary file is removed and ``real`` is untouched."""
    if not stat.S_ISREG(read.stat.st_mode):  # a pipe (`<(cat a.py)`), a device
        raise NotFixed(NOT_REGULAR)
    if read.stat.st_nlink > 1:  # os.replace gives this name a new file: the other names keep the old text
        raise NotFixed(f"it has {read.stat.st_nlink} hard links; replacing it would split them")
    os.close(os.open(real, os.O_WRONLY))  # may we write it? (read-only file: PermissionError)
    # the file's name in the temporary one's, unless that would pass NAME_MAX (255 bytes)
    prefix = f".{real.name}." if len(os.fsencode(real.name)) <= _NAME_IN_TMP else ".flake8-xla."
    fd, tmp = tempfile.mkstemp(dir=real.parent, prefix=prefix, suffix=".flake8-xla")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if hasattr(os, "chown") and (read.stat.st_uid, read.stat.st_gid) != (os.geteuid(), os.getegid()):
            with contextlib.suppress(OSError):  # only root may give a file away
                os.chown(tmp, read.stat.st_uid, read.stat.st_gid)
        shutil.copymode(real, tmp)
        if _changed(real, read):
            raise NotFixed(CHANGED)
        os.replace(tmp, real)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):  # make the rename itself durable
        folder = os.open(real.parent, os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)


def write_file(path, data: bytes) -> None:
    """Write ``data`` to the file at ``path`` atomically: an existing file (through a link:
    its target) is replaced with :func:`write_atomic`; a new one is made the same way (a
    temporary file in the folder, fsynced, renamed into place) with the mode the umask
    gives. Raises :class:`NotFixed` or ``OSError`` as :func:`write_atomic` does."""
    real = Path(os.path.realpath(path))
    if os.path.lexists(real):
        write_atomic(real, data, _read(real))
        return
    umask = os.umask(0)
    os.umask(umask)
    fd, tmp = tempfile.mkstemp(dir=real.parent, prefix=f".{real.name}."[:_NAME_IN_TMP], suffix=".flake8-xla")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, real)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


class _NotebookFix:
    """A notebook to fix: its code cells as one module, and the fixed module put back."""

    def __init__(self, text: str) -> None:
        from ..notebook import NotebookError, parse

        try:
            self.nb = parse(text)
        except NotebookError as exc:
            raise NotFixed(f"not a notebook: {exc}") from None
        self.module = "".join(self.nb.module_lines())

    def apply(self, fixed: str, display: str) -> tuple[str, str]:
        """(the JSON text with the changed cells' sources rewritten, a unified diff per
        changed cell, each named ``display:cell N``). Raises :class:`NotFixed` when the
        changes cannot be put back into the cells."""
        from ..notebook import NotebookError

        if fixed == self.module:
            return self.nb.text, ""
        try:
            text, changed = self.nb.apply(fixed)
        except NotebookError as exc:
            raise NotFixed(str(exc)) from None
        return text, "".join(unified_diff(cell.source, source, f"{display}:cell {cell.index}")
                             for cell, source in changed)


def _emit(out, data: bytes, text: str) -> None:
    """Write a module's bytes to ``out`` (its binary buffer when it has one)."""
    buffer = getattr(out, "buffer", None)
    if buffer is None:
        out.write(text)
        return
    out.flush()
    buffer.write(data)
    buffer.flush()


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def show_unfixed(files: list[tuple[str, dict[str, int]]]) -> str:
    """The part of ``--show-fixes`` that names what remains although its rule has a fix (the
    shape there needs a human: a device held in a variable, an import that must stay...),
    so that no finding shown as fixable is left in silence::

        No fix available for 1 finding:
        - train.py:
            1 x XLA401 (cuda-device)

    ``files``: (file, {code: findings}) in the order fixed; empty text when there are none."""
    total = sum(n for _, codes in files for n in codes.values())
    if not total:
        return ""
    return f"No fix available for {_plural(total, 'finding')}:\n" + _per_file(files)


def show_fixes(files: list[tuple[str, dict[str, int]]], would: bool = False) -> str:
    """``--show-fixes``: what the fixes changed, per file and code, as Ruff prints it::

        Fixed 3 findings:
        - train.py:
            2 x XLA101 (ddp-without-gradient-as-bucket-view)
            1 x XLA805 (deprecated-mark-step)

    ``files``: (file, {code: findings fixed}) in the order fixed; ``would`` for ``--diff``
    (``Would fix``). No findings fixed: ``No findings fixed.`` (``No findings would be fixed.``)."""
    total = sum(n for _, codes in files for n in codes.values())
    if not total:
        return "No findings would be fixed.\n" if would else "No findings fixed.\n"
    return f"{'Would fix' if would else 'Fixed'} {_plural(total, 'finding')}:\n" + _per_file(files)


def _per_file(files: list[tuple[str, dict[str, int]]]) -> str:
    """The lines of :func:`show_fixes` and :func:`show_unfixed` under their heading: each
    file, then each code's count and rule name."""
    from ..registry import all_rules

    rules = all_rules()
    out = []
    for display, codes in files:
        out.append(f"- {display}:\n")
        for code in sorted(codes):
            cls = rules.get(code)
            out.append(f"    {codes[code]} x {code}" + (f" ({cls.name})" if cls else "") + "\n")
    return "".join(out)


def run(args, paths: Iterable, settings, is_selected: Callable[[str, str], bool] = lambda path, code: True,
        out=None, err=None, stdin=None, stdin_name: str | None = None,
        excluded: Callable[[str], bool] = lambda path: False, summary: bool = True) -> Outcome:
    """Fix (or diff) every file in ``paths`` (``-``: standard input, shown as ``stdin_name``).

    ``args`` has ``fix``, ``diff`` and ``unsafe_fixes``; ``is_selected(path, code)`` limits
    what is fixed (per-file-ignores), ``excluded(path)`` says a path is excluded; a file
    reached through a link is fixed only with what both its path and its target select, and
    not at all when its target is excluded (``its target ... is excluded``): a link must not
    open a door to what the configuration keeps out. ``out`` / ``err`` default to
    sys.stdout / sys.stderr, ``stdin`` (bytes) to
    sys.stdin.buffer. ``--fix`` writes each fixed file with :func:`write_atomic` in its own
    encoding (:func:`decode`); ``--fix -`` writes the fixed text to ``out``. A file that
    cannot be read, decoded, encoded or written, that is not a regular file (not read), has
    other hard links or changed meanwhile, or a path through a link (to the file or to a
    folder on the way) whose target is outside the project root (:func:`_project_root`)
    gets one line on ``err`` (``path: not fixed: why``) and the others are still fixed. A
    link is fixed through its resolved target, once however many paths lead to it. Never
    raises for a file's sake.
    Returns an :class:`Outcome`: ``--diff`` stops with 1 when there is a diff, 2 when a file
    was skipped, else 0; no LibCST stops with 2. ``--fix`` ends with the summary line
    (:meth:`Outcome.summary`, counting what the fixer saw remain) unless ``summary`` is
    False: the CLI prints it after its lint, with what that lint reports.
    """
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        from . import fixer
    except ImportError:
        err.write(f"flake8-xla: error: --fix and --diff need LibCST: {PIP_COMMAND}\n")
        return Outcome(2)
    from .cuda import cuda_signs

    fixed = remaining = skipped = cuda = 0
    shown: list[tuple[str, dict[str, int]]] = []  # --show-fixes: (file, {code: fixed})
    unfixed: list[tuple[str, dict[str, int]]] = []  # --show-fixes: (file, {code: left though it has a fix})
    allowed = (SAFE, UNSAFE) if args.unsafe_fixes else (SAFE,)

    def left_unfixed(display, result) -> None:
        codes: dict[str, int] = {}
        for f in result.findings:
            if applicability(f.code) in allowed:
                codes[f.code] = codes.get(f.code, 0) + 1
        if codes:
            unfixed.append((display, dict(sorted(codes.items()))))
    changed = False
    stdin_text = stdin_out = None  # --fix -: the fixed text, and what goes to ``out``
    seen: set[Path] = set()
    root: Path | None = None
    for path in paths:
        if path == STDIN:
            display = stdin_name or "stdin"
            data = (stdin or sys.stdin.buffer).read()
            real = None
        else:
            display = str(path)
            real = Path(os.path.realpath(path))
            if real in seen:  # another link to a file already fixed (or named twice)
                continue
            seen.add(real)
        result = None
        try:
            linked = real is not None and real != Path(os.path.abspath(path))  # a link on the way
            if linked:
                root = root or Path(os.path.realpath(_project_root()))
                # the target or a folder above it in the project, as the walk excludes a folder
                if any(excluded(str(p)) for p in (real, *real.parents) if p != root and p.is_relative_to(root)):
                    raise NotFixed(f"its target {real} is excluded")
            if real is not None:
                read = _read(path)
                data = read.data
            text, encoding = decode(data)
            paths_of = (display, str(real)) if linked else (display,)
            # a notebook: a .ipynb file, or standard input so named that holds JSON (an editor
            # may send a notebook's cells as Python under its name)
            notebook = is_notebook(display) if real is not None else \
                is_notebook(stdin_name) and text.lstrip().startswith("{")
            notebook = _NotebookFix(text) if notebook else None
            result = fixer.fix_source(notebook.module if notebook else text, settings, path=display,
                                      unsafe=args.unsafe_fixes,
                                      is_selected=lambda code, ps=paths_of: all(is_selected(p, code) for p in ps),
                                      filename=None if notebook else display if real is not None else stdin_name)
            if result.refused:  # never handed to LibCST (fix.limits): one line, and the next file
                raise NotFixed(result.refused)
            if result.reverted:
                err.write(f"{display}: fixes not applied: {result.reverted}\n")
            new_text, diff = result.source, None
            if notebook:  # only the changed cells' sources change in the JSON text
                new_text, diff = notebook.apply(result.source, display)
            new_data = data
            if new_text != text:
                _round_trips(text, encoding, data)
                new_data = encode(new_text, encoding)
            if args.diff:
                out.write(unified_diff(text, new_text, display) if diff is None else diff)
            elif real is None:
                stdin_text, stdin_out = new_text, (new_data, new_text)
            elif new_data != data:
                # reached through a link (the file's or a folder's on its path): write the
                # target, not over the link, and only in the project
                if linked:
                    root = root or Path(os.path.realpath(_project_root()))
                    if not real.is_relative_to(root):
                        raise NotFixed(f"its target {real} is outside the project root {root}")
                write_atomic(real, new_data, read)
        except (NotFixed, OSError) as exc:
            why = str(exc) if isinstance(exc, NotFixed) else f"cannot write it: {exc.strerror or exc}"
            err.write(f"{display}: not fixed: {why}\n")
            skipped += 1
            if result is not None:
                remaining += result.fixed + result.remaining
                left_unfixed(display, result)
            if real is None:  # the editor gets its text back as it was
                stdin_out = (data, data.decode("utf-8", errors="surrogateescape"))
            continue
        fixed += result.fixed
        remaining += result.remaining
        changed = changed or new_text != text
        if result.fixed_codes:
            shown.append((display, result.fixed_codes))
        left_unfixed(display, result)
        if settings.scope == "auto" and not (result.fixed or result.remaining or result.reverted):
            signs = cuda_signs(notebook.module if notebook else text)
            if signs:  # the rules skipped a CUDA script: not "fixed 0 findings" alone
                err.write(f"{display}: skipped: it does not import torch_xla but looks like CUDA training "
                          f"({', '.join(signs)}); to port it, run with --xla-scope=always\n")
                cuda += 1
    noun = "finding" if fixed == 1 else "findings"
    cuda_note = _cuda_note(cuda)
    if getattr(args, "show_fixes", False):
        err.write(show_fixes(shown, would=bool(args.diff)) + show_unfixed(unfixed))
    if args.diff:
        err.write(f"flake8-xla: would fix {fixed} {noun}, {remaining} would remain"
                  + (f", {_plural(skipped, 'file')} skipped" if skipped else "") + cuda_note + "\n")
        return Outcome(2 if skipped else 1 if changed else 0)
    if stdin_out is not None:
        _emit(out, *stdin_out)
    outcome = Outcome(None, skipped, stdin_text, fixed, cuda)
    if stdin_out is not None and stdin_text is None:  # --fix - that failed: its line is on stderr
        outcome.status = 2
    if summary or outcome.status is not None:
        err.write(outcome.summary(remaining))
    return outcome
