"""The rule families. Importing this package registers every rule (meta tests check the list)."""

from . import amp, api, devices, distributed, launch, step  # noqa: F401
from . import timing  # noqa: F401

MODULES = ("launch", "distributed", "step", "devices", "amp", "api")
