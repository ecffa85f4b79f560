"""Marks of the fresh material in ``tests/fresh/`` known not to hold yet: key -> why (the kind).

A ratchet read by tests/test_fresh.py, like tests/projects_pending.py: a change that makes a
mark hold fails that test until its row is removed here; a new wrong finding is never listed.
Keys: ``(project, file, line, code)`` for ``tests/fresh/projects``, ``(case, line, code)`` for
``tests/fresh/cases``. The material was written blind by helpers in session 10 (labels before
any run, reasons in each ``LABELS.md``); a few labels are arguable, said so here.
"""

#: what another object's methods return (``strategy.setup_module(module)``, ``backend.wrap_model``,
#: ``backend.make_loader``): issue 28's value lattice on the reach
RETURNED = "an object or value another object's method returns (issue 28: values through dispatch)"
#: a hook's or callback's parameters and an object's attributes read in another module
HOOK_VALUES = "a value handed to a hook or read off an object of another module (issue 28: values into parameters)"
#: a handler class between the trainer and the callbacks it fires
HANDLER = "callbacks fired through a handler object (issue 28: container items)"

PROJECTS: dict[tuple[str, str, int, str], str] = {
    ("q1", "classifier.py", 33, "XLA502"): RETURNED + ": `module = self.strategy.setup_module(module)` rebinds the receiver",
    ("q1", "classifier.py", 50, "XLA501"): RETURNED,
    ("q1", "datamodule.py", 33, "XLA304"): RETURNED + ": the loader reaches the step through `strategy.process_dataloader`",
    ("q1", "minilit/core.py", 111, "XLA507"): HOOK_VALUES + ": `module.logged_metrics` filled by the user's `self.log`",
    ("q2", "accel/tpu.py", 46, "XLA108"): RETURNED + ": the DDP model `backend.wrap_model()` returns (an inherited method)",
    ("q2", "modeling.py", 37, "XLA502"): RETURNED + ": `forward` of the model a backend method returns wrapped in DDP",
    ("q3", "cbtrain/guards.py", 23, "XLA203"): HANDLER,
    ("q3", "cbtrain/metrics.py", 21, "XLA504"): HANDLER + ": the timer starts and stops in two callbacks",
    ("q3", "train_tpu.py", 34, "XLA205"): "the seed `cfg.seed + index` with no reduction wrapper seen: the Learner steps with "
                                          "xm.optimizer_step in another module",
    ("q4", "src/vitpod/distributed.py", 10, "XLA003"): "a module-level runtime call run at import time by the launching "
                                                       "script's imports, before its xmp.spawn",
    ("q4", "src/vitpod/engine.py", 55, "XLA603"): HOOK_VALUES + ": the FSDP model handed to `save_checkpoint(model, ...)`",
    ("q5", "utils.py", 51, "XLA501"): HOOK_VALUES + ": a read derived from device arguments through topk/eq/reshape "
                                      "(a second caller passes unknown values)",
    ("q5", "utils.py", 60, "XLA109"): "arguable label: `WORLD_SIZE` read with a default in a helper shared with a "
                                      "torchrun script",
    ("q5", "utils.py", 70, "XLA405"): HOOK_VALUES + ": the optimizer built in a helper before the caller moves the model",
    ("q6", "model.py", 63, "XLA903"): "ties in `__init__` of a class another module builds and moves in place "
                                      "(`raw_model.to(device)`)",
    ("q6", "model.py", 89, "XLA503"): HOOK_VALUES + ": the mask argument of `forward` from another module's batch helper",
    ("q6", "train.py", 100, "XLA507"): "arguable label: the read follows the pass's `torch_xla.sync()`",
}

CASES: dict[tuple[str, int, str], str] = {
    ("s13", 51, "XLA507"): "arguable label: the read follows the pass's sync",
}
