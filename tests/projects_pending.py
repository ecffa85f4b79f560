"""Marks of ``../shared/projects`` known not to hold yet: (project, file, variant, line, code) -> why.

A ratchet read by tests/test_projects.py: when a change makes a mark hold, that test fails until
its row is removed here. False positives are never listed: they are fixed.
"""

PENDING: dict[tuple[str, str, str, int, str], str] = {
    ("p05_hf_plugins", "scripts/run_tpu.py", "default", 16, "XLA501"):
        "the grad norm of `trainer.model.parameters()`: the device of an attribute of the trainer handed "
        "to the callback (the callback itself is now known to run in the step)",
    ("p05_hf_plugins", "hftpu/tpu_trainer.py", "default", 24, "XLA903"):
        "XLA903's Hugging Face shape (issue 29 section 2.5) with the model from the launched caller",
    ("p06_torchrun_or_tpu", "backends/xla_backend.py", "default", 37, "XLA108"):
        "the optimizer of the DDP model another module's backend.wrap() returns, stepped in backend.step()",
}
