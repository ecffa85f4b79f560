"""Autofix for the standalone CLI: ``flake8-xla --fix`` / ``--diff`` / ``--unsafe-fixes``.

This package's top level never imports LibCST: it holds what the CLI and the docs need
(the options, each rule's applicability, the text of its docs line). The rewriting itself
(``flake8_xla.fix.fixer``, on LibCST, an optional extra: ``pip install 'flake8-xla[fix]'``)
is imported only when ``--fix`` or ``--diff`` is given, so the flake8 and pylint plugins
stay dependency-free.

Conventions follow Ruff's: ``--fix`` rewrites files in place and the CLI then reports what
remains; ``--diff`` prints a unified diff, writes nothing and exits 1 when there is a diff;
``--unsafe-fixes`` also applies the fixes that may change behaviour beyond the finding.
Each rule declares its applicability in its class (``Rule.fix_applicability``: ``"safe"``,
``"unsafe"`` or ``"none"``); what the fix does is described in ``FIX_DOCS`` below.
"""

from __future__ import annotations

import difflib
import sys
from pathlib import Path
from typing import Callable, Iterable

SAFE, UNSAFE, NONE = "safe", "unsafe", "none"
APPLICABILITIES = (SAFE, UNSAFE, NONE)
PIP_COMMAND = "pip install 'flake8-xla[fix]'"

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
    "XLA201": "`optimizer.step()` -> `xm.optimizer_step(optimizer)`; when a clip precedes the step, "
              "`xm.reduce_gradients(optimizer)` before the clip instead (XLA203): unsafe, the replicas now "
              "average their gradients before the step (or wrap the model in DDP instead)",
    "XLA203": "`clip_grad_norm_(...); xm.optimizer_step(opt)` -> `xm.reduce_gradients(opt); "
              "clip_grad_norm_(...); opt.step()` (the step in the clip's block, with no argument but the "
              "optimizer): unsafe, the clip now sees the averaged gradients",
    "XLA301": "`for x in loader:` -> `for x in pl.MpDeviceLoader(loader, device):` (inside `enumerate()` / "
              "`tqdm()` too; for a loader passed to a training function, that function's loop, when "
              "every loader reaching it is a plain one: the function may read `loader.sampler`), with "
              "the device variable in scope, else `torch_xla.device()`: unsafe, the batches now arrive on "
              "the device and the graph is cut per batch; `next(iter(loader))` needs a human",
    "XLA303": "binds `sampler = DistributedSampler(ds, num_replicas=xr.world_size(), rank=xr.global_ordinal(), "
              "shuffle=...)` before the loader's statement (its `shuffle=` moves to the sampler) and passes "
              "`sampler=sampler`; a `RandomSampler(ds)` / `SequentialSampler(ds)` becomes that sampler; a "
              "`DistributedSampler(ds)` gets the two arguments: unsafe, each replica now reads its own "
              "share; call `sampler.set_epoch(epoch)` each epoch yourself",
    "XLA304": "adds `drop_last=True` to the `DataLoader(...)` call: unsafe, the last samples of "
              "every epoch are no longer seen",
    "XLA404": "adds `model.to(device)` right after `model = ...` (the device variable bound before it, "
              "else `torch_xla.device()`): unsafe, the module and what it computes move to the device",
    "XLA405": "moves the optimizer's assignment statement to just after the statement that moves the "
              "module, when nothing between uses the optimizer or rebinds a name its constructor reads "
              "(moving the module up instead could move it before code that expects it on the CPU, such "
              "as a weight tie): unsafe, code between no longer sees the optimizer",
    "XLA401": "`.cuda()` -> `.to(torch_xla.device())`, `.to(\"cuda\")` / `device=\"cuda\"` / "
              "`torch.device(\"cuda\")` -> the XLA device, `torch.cuda.synchronize()` -> "
              "`torch_xla.sync(wait=True)`, a `torch.cuda.set_device(...)` / `empty_cache()` "
              "statement is dropped; a device held in a variable and `map_location` need a human",
    "XLA402": "`.to(rank)`, `device=rank`, `xm.xla_device(i)`, `torch_xla.device(n)`, "
              "`torch.device(\"xla\", rank)`, `f\"xla:{rank}\"` -> `torch_xla.device()` "
              "(`xm.xla_device()` before torch_xla 2.3)",
    "XLA801": "`xm.xrt_world_size()` -> `xr.world_size()` (adds `import torch_xla.runtime as xr` or reuses "
              "the module's alias; removes the import it left unused)",
    "XLA802": "`xm.get_ordinal()` -> `xr.global_ordinal()` (imports managed as for XLA801)",
    "XLA803": "`xm.parse_xla_device(d)` -> `torch_xla._internal.utils.parse_xla_device(d)`, the "
              "function the alias called (same result; private: prefer rewriting it by hand)",
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
    group.add_argument("--fix", action="store_true", help="apply the safe fixes in place, then report what remains")
    group.add_argument("--diff", action="store_true",
                       help="print the fixes as a unified diff and change nothing (exit 1 when there is a diff)")
    group.add_argument("--unsafe-fixes", action="store_true",
                       help="with --fix/--diff, also apply the fixes that may change behaviour")


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


def run(args, paths: Iterable, settings, is_selected: Callable[[str, str], bool] = lambda path, code: True,
        out=None, err=None) -> int | None:
    """Fix (or diff) every file in ``paths``.

    Returns an exit status when the CLI should stop here (2: LibCST missing; ``--diff``:
    1 when there is a diff, else 0), or None after ``--fix``: the CLI then lints the
    fixed files as usual and reports what remains (exit 1 when anything does).
    """
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        from . import fixer
    except ImportError:
        err.write(f"flake8-xla: error: --fix and --diff need LibCST: {PIP_COMMAND}\n")
        return 2
    fixed = remaining = 0
    changed = False
    for path in paths:
        path = Path(path)
        try:
            with open(path, encoding="utf-8", newline="") as fh:
                source = fh.read()
        except (OSError, UnicodeError):
            continue  # the lint reports it (E902)
        result = fixer.fix_source(source, settings, path=str(path), unsafe=args.unsafe_fixes,
                                  is_selected=lambda code, p=str(path): is_selected(p, code))
        if result.reverted:
            err.write(f"{path}: fixes not applied: {result.reverted}\n")
        fixed += result.fixed
        remaining += result.remaining
        if result.source == source:
            continue
        changed = True
        if args.diff:
            out.write(unified_diff(source, result.source, str(path)))
        else:
            with open(path, "w", encoding="utf-8", newline="") as fh:
                fh.write(result.source)
    noun = "finding" if fixed == 1 else "findings"
    if args.diff:
        err.write(f"flake8-xla: would fix {fixed} {noun}, {remaining} would remain\n")
        return 1 if changed else 0
    err.write(f"flake8-xla: fixed {fixed} {noun}, {remaining} remaining\n")
    return None
