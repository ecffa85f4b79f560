"""Harness of the ports runtime set (tests/runtime/test_ports.py), loaded by ``site`` at start-up.

It never changes the script under test; it only watches it, and, where a lint case passes
``None`` for its model or data, stands in for those arguments:

- ``FLAKE8_XLA_PORT_REPORT`` (a folder): every optimizer step, through torch's global
  optimizer hooks, writes ``<pid>.json`` there: per optimizer, the steps taken, a checksum of
  its parameters before the first step and after the last, and the loss of each
  ``Tensor.backward()`` call (``null`` when the loss was not a finite number).
- ``FLAKE8_XLA_PORT_STANDINS`` (JSON ``{function name: Python expression}``): ``torch_xla.launch``
  and ``xmp.spawn`` of a function named there call it in this process, as one replica
  (``debug_single_process=True``), with the expression's tuple (evaluated with ``standins``
  as ``S``, ``torch`` and ``torch_xla``) in place of the script's ``args``.
"""
import json
import math
import os

_REPORT = os.environ.get("FLAKE8_XLA_PORT_REPORT")
_STANDINS = os.environ.get("FLAKE8_XLA_PORT_STANDINS")

if _REPORT or _STANDINS:
    import torch

if _REPORT:
    from torch.optim.optimizer import register_optimizer_step_post_hook, register_optimizer_step_pre_hook

    _state = {}  # id(optimizer) -> record
    _alive = []  # every optimizer seen, kept alive: a collected one's id may be reused by the next
    _losses = []
    _original_backward = torch.Tensor.backward

    def _backward(self, *args, **kwargs):
        if self.numel() == 1:
            _losses.append(self.detach())
        return _original_backward(self, *args, **kwargs)

    torch.Tensor.backward = _backward

    def _checksum(optimizer):
        total = 0.0
        for group in optimizer.param_groups:
            for p in group["params"]:
                total += float(p.detach().abs().sum().cpu())
        return total

    def _pre(optimizer, args, kwargs):
        key = id(optimizer)
        if key not in _state:
            _alive.append(optimizer)
            _state[key] = {"type": type(optimizer).__name__, "steps": 0, "before": _checksum(optimizer)}

    def _post(optimizer, args, kwargs):
        record = _state[id(optimizer)]
        record["steps"] += 1
        record["after"] = _checksum(optimizer)
        losses = []
        for loss in _losses:
            value = float(loss.cpu())
            losses.append(value if math.isfinite(value) else None)
        _losses.clear()
        record.setdefault("losses", []).extend(losses)
        path = os.path.join(_REPORT, f"{os.getpid()}.json")
        with open(path + ".tmp", "w", encoding="utf-8") as out:
            json.dump(list(_state.values()), out)
        os.replace(path + ".tmp", path)

    register_optimizer_step_pre_hook(_pre)
    register_optimizer_step_post_hook(_post)

if _STANDINS:
    import torch_xla
    import torch_xla.distributed.xla_multiprocessing as xmp

    _plan = json.loads(_STANDINS)
    _launch, _spawn = torch_xla.launch, xmp.spawn

    def _one_replica(fn):
        import standins

        def _rt_standin(index):
            args = eval(_plan[fn.__name__], {"S": standins, "torch": torch, "torch_xla": torch_xla})
            return fn(index, *args)
        _launch(_rt_standin, args=(), debug_single_process=True)

    def launch(fn, *args, **kwargs):
        if getattr(fn, "__name__", None) in _plan:
            return _one_replica(fn)
        return _launch(fn, *args, **kwargs)

    def spawn(fn, *args, **kwargs):
        if getattr(fn, "__name__", None) in _plan:
            return _one_replica(fn)
        return _spawn(fn, *args, **kwargs)

    torch_xla.launch, xmp.spawn = launch, spawn
