"""Shared helpers of the runtime programs (run on torch_xla 2.9, never imported by the linter).

Each program calls :func:`report` once per rule code with what the runtime did in the bad shape
and in the good shape; the tests read those ``CHECK {json}`` lines from its stdout.
"""
import json
import sys
import warnings

import torch_xla.debug.metrics as met


def report(code, **observed):
    """Print one ``CHECK`` line: the rule code and what was observed (JSON-able values)."""
    # one write of the whole line: the runtime's C++ code (gloo) writes to the same stdout
    sys.stdout.write("CHECK " + json.dumps({"code": code, **observed}, sort_keys=True, default=repr) + "\n")
    sys.stdout.flush()


def _first_line(text):
    lines = str(text).strip().splitlines()
    return lines[0][:300] if lines else ""


def outcome(fn):
    """Run ``fn()``: ``{"ok": value}`` or ``{"raised": type name, "message": first line}``, plus
    ``"warnings"``: ``[category name, first line]`` of every warning it issued."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value = fn()
            result = {"ok": value if isinstance(value, (bool, int, float, str, list, type(None))) else repr(value)}
        except Exception as exc:  # the point of the check: what the runtime raises
            result = {"raised": type(exc).__name__, "message": _first_line(exc)}
    result["warnings"] = [[w.category.__name__, _first_line(w.message)] for w in caught]
    return result


def samples(metric):
    """How many samples the runtime's metric holds (0 before its first)."""
    data = met.metric_data(metric)
    return 0 if data is None else data[0]


def _wait():
    import torch_xla.core.xla_model as xm

    xm.wait_device_ops()


class Counted:
    """Context manager: the runtime's counts over its block (``.delta``): graphs compiled
    (``CompileTime`` samples), executed (``ExecuteComputation``), device-to-host transfers
    (``TransferFromDeviceTime`` samples) and syncs (``MarkStep``). Executions run on the
    runtime's own thread after ``torch_xla.sync()`` returns, so by default the block's end
    waits for them (``xm.wait_device_ops()``, as does its start) before counting; ``wait=False`` counts what had
    run when the block ended."""

    def __init__(self, wait=True):
        self.wait = wait

    @staticmethod
    def _now():
        return {"compiles": samples("CompileTime"), "executions": met.counter_value("ExecuteComputation") or 0,
                "transfers": samples("TransferFromDeviceTime"), "syncs": met.counter_value("MarkStep") or 0}

    def __enter__(self):
        _wait()  # work started before the block is not the block's
        self._start = self._now()
        return self

    def __exit__(self, *exc):
        if self.wait:
            _wait()
        end = self._now()
        self.delta = {k: end[k] - self._start[k] for k in end}
        return False
