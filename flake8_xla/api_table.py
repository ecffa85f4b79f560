"""torch_xla API facts across releases: data, not code.

Every boundary below was checked on the pytorch/xla release tags by reading the tagged
source (``git show vX.Y.0:torch_xla/...``; 2.1 from ``v2.1.1``, since the ``v2.1.0`` tag
points at a pre-release master commit). Versions are ``"X.Y"`` strings; ``None`` means
"never" within the releases the rules know.

``CHANGES``: one record per renamed, deprecated or removed name.
``SIGNATURES``: parameter lists of torch_xla APIs per version range, for XLA809.
"""

from __future__ import annotations

CHANGES: tuple[dict, ...] = (
    {
        "code": "XLA801",
        "name": "torch_xla.core.xla_model.xrt_world_size",
        "deprecated": "2.5",
        "removed": "2.7",
        "replacement": "torch_xla.runtime.world_size()",
        "replacement_since": "2.1",
        "reference": "torch_xla/core/xla_model.py: deprecated(...) alias in 2.5-2.6 (#7679), removed in 2.7 (#8927)",
    },
    {
        "code": "XLA802",
        "name": "torch_xla.core.xla_model.get_ordinal",
        "deprecated": "2.5",
        "removed": "2.7",
        "replacement": "torch_xla.runtime.global_ordinal()",
        "replacement_since": "2.1",
        "reference": "torch_xla/core/xla_model.py: deprecated(...) alias in 2.5-2.6 (#7679), removed in 2.7 (#8927)",
    },
    {
        "code": "XLA804",
        "name": "torch_xla.core.xla_model.xla_device",
        "deprecated": "2.8",
        "removed": None,
        "replacement": "torch_xla.device()",
        "replacement_since": "2.3",
        "reference": 'torch_xla/core/xla_model.py: @deprecated("Use torch_xla.device instead") since 2.8 (#9200)',
    },
    {
        "code": "XLA804",
        "name": "torch_xla.runtime.xla_device",
        "deprecated": None,
        "removed": "2.8",
        "replacement": "torch_xla.device()",
        "replacement_since": "2.3",
        "reference": "torch_xla/runtime.py: xla_device present 2.1-2.7, removed in 2.8 (#9200)",
    },
    {
        "code": "XLA805",
        "name": "torch_xla.core.xla_model.mark_step",
        "deprecated": "2.8",
        "removed": None,
        "replacement": "torch_xla.sync()",
        "replacement_since": "2.4",
        "reference": 'torch_xla/core/xla_model.py: @deprecated("Use torch_xla.sync instead") since 2.8 (#9086)',
    },
)

# name -> list of (first version, last version or None, parameter list in Python syntax,
# the call to suggest). A parameter list "" means no arguments.
SIGNATURES: dict[str, tuple[tuple[str, str | None, str, str], ...]] = {
    "torch_xla.core.xla_model.optimizer_step": (
        ("2.0", None, "optimizer, barrier=False, optimizer_args={}, groups=None, pin_layout=True",
         "xm.optimizer_step(optimizer)"),
    ),
    "torch_xla.core.xla_model.reduce_gradients": (
        ("2.0", None, "optimizer, groups=None, pin_layout=True", "xm.reduce_gradients(optimizer)"),
    ),
    "torch_xla.core.xla_model.get_local_ordinal": (
        ("2.0", "2.4", "defval=0", "xm.get_local_ordinal()"),
        ("2.5", None, "", "xr.local_ordinal()"),
    ),
    "torch_xla.core.xla_model.get_xla_supported_devices": (
        ("2.0", "2.7", "devkind: str = None, max_devices: int = None", "xm.get_xla_supported_devices()"),
        ("2.8", None, "max_devices: int = None", "torch_xla.devices()"),
    ),
    "torch_xla.core.xla_model.xla_device": (
        ("2.0", None, "n=None, devkind=None", "torch_xla.device()"),
    ),
    "torch_xla.core.xla_model.mark_step": (
        ("2.0", "2.3", "wait=False", "xm.mark_step()"),
        ("2.4", None, "wait=False, reset_scope=True", "torch_xla.sync()"),
    ),
    "torch_xla.core.xla_model.add_step_closure": (
        ("2.0", None, "closure, args=(), run_async=False", "xm.add_step_closure(fn, args=(...))"),
    ),
    "torch_xla.core.xla_model.is_master_ordinal": (
        ("2.0", None, "local=True", "xm.is_master_ordinal(local=False)"),
    ),
    "torch_xla.distributed.xla_multiprocessing.spawn": (
        ("2.0", None, "fn, args=(), nprocs=None, join=True, daemon=False, start_method='spawn'",
         "xmp.spawn(fn, args=(...))"),
    ),
    "torch_xla.launch": (
        ("2.5", None, "fn, args=(), start_method='spawn', debug_single_process=False",
         "torch_xla.launch(fn, args=(...))"),
    ),
    "torch_xla.device": (
        ("2.3", None, "index=None", "torch_xla.device()"),
    ),
    "torch_xla.sync": (
        ("2.4", "2.4", "", "torch_xla.sync()"),
        ("2.5", "2.7", "wait=False", "torch_xla.sync(wait=...)"),
        ("2.8", None, "wait=False, reset_scope=True", "torch_xla.sync(wait=...)"),
    ),
    "torch_xla.runtime.world_size": (("2.1", None, "", "xr.world_size()"),),
    "torch_xla.runtime.global_ordinal": (("2.1", None, "", "xr.global_ordinal()"),),
    "torch_xla.runtime.local_ordinal": (("2.1", None, "", "xr.local_ordinal()"),),
    "torch_xla.distributed.parallel_loader.MpDeviceLoader": (
        ("2.0", None, "loader, device, **kwargs", "pl.MpDeviceLoader(loader, device)"),
    ),
}
