"""The rule families. Importing this package registers every rule (meta tests check the list)."""

from . import (  # noqa: F401
    amp, api, checkpoint, data, devices, distributed, host, launch, modules, newer, optimizer, runtime, shapes, step,
    timing,
)

MODULES = (
    "launch", "distributed", "step", "optimizer", "data", "host", "shapes", "timing", "devices", "amp", "api",
    "checkpoint", "runtime", "newer", "modules",
)
