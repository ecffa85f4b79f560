"""The rule families. Importing this package registers every rule (meta tests check the list)."""

from . import amp, api, devices, distributed, host, launch, optimizer, shapes, step, timing  # noqa: F401

MODULES = ("launch", "distributed", "step", "optimizer", "host", "shapes", "timing", "devices", "amp", "api")
