"""The rule families. Importing this package registers every rule (meta tests check the list)."""

from . import amp, api, checkpoint, data, devices, distributed, host, launch, runtime, shapes, step, timing  # noqa: F401

MODULES = (
    "launch", "distributed", "step", "data", "host", "shapes", "timing", "devices", "amp", "api", "checkpoint", "runtime",
)
