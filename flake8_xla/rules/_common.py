"""Small helpers shared by the rule families (queries on the model, wording by version)."""

from __future__ import annotations

import ast
import re

from .. import api_table
from ..model import UNKNOWN, Model
from ..settings import Settings

SHORT_MODULES = (
    ("torch_xla.core.xla_model.", "xm."),
    ("torch_xla.runtime.", "xr."),
    ("torch_xla.distributed.xla_multiprocessing.", "xmp."),
    ("torch_xla.distributed.parallel_loader.", "pl."),
    ("torch_xla.distributed.spmd.", "xs."),
)


def short_name(qualname: str) -> str:
    """``torch_xla.core.xla_model.mark_step`` -> ``xm.mark_step`` (the docs' aliases)."""
    for prefix, short in SHORT_MODULES:
        if qualname.startswith(prefix):
            return short + qualname[len(prefix):]
    return qualname


def at_least(settings: Settings, version: str) -> bool:
    major, minor = (int(p) for p in version.split("."))
    return settings.target_version >= (major, minor)


def device_call(settings: Settings) -> str:
    """The documented way to get this process's XLA device in the target version."""
    return "torch_xla.device()" if at_least(settings, "2.3") else "xm.xla_device()"


def launch_call(settings: Settings) -> str:
    return "torch_xla.launch(fn, args=...)" if at_least(settings, "2.5") else "xmp.spawn(fn, args=...)"


def init_method(settings: Settings) -> str:
    return "xla://" if at_least(settings, "2.1") else "pjrt://"


def runtime_api(settings: Settings, what: str) -> str:
    """``xr.world_size()`` and friends, or their pre-2.1 spelling."""
    new = {"WORLD_SIZE": "xr.world_size()", "RANK": "xr.global_ordinal()", "LOCAL_RANK": "xr.local_ordinal()",
           "LOCAL_WORLD_SIZE": "xr.local_process_count()"}
    old = {"WORLD_SIZE": "xm.xrt_world_size()", "RANK": "xm.get_ordinal()", "LOCAL_RANK": "xm.get_local_ordinal()",
           "LOCAL_WORLD_SIZE": "xm.xrt_world_size()"}
    return new[what] if at_least(settings, "2.1") else old[what]


def render(expr) -> str:
    """A short source-like rendering of a small expression (names, attributes, constants)."""
    if expr is None or expr is UNKNOWN:
        return "..."
    parts = []
    node = expr
    while type(node) is ast.Attribute:
        parts.append(node.attr)
        node = node.value
    if type(node) is ast.Name:
        text = ".".join([node.id] + list(reversed(parts)))
        return text if len(text) <= 30 else text[:29] + "\u2026"  # messages quote at most 30 characters
    if type(node) is ast.Constant and not parts:
        text = repr(node.value)
        return text if len(text) <= 30 else text[:27] + "..."
    if type(node) is ast.UnaryOp and type(node.op) is ast.USub and type(node.operand) is ast.Constant and not parts:
        return "-" + repr(node.operand.value)
    return "..."


def source_text(expr, limit: int = 30) -> str:
    """``expr`` as source (``ast.unparse``), cut to ``limit`` characters with an ellipsis:
    ``nprocs=POD_CORES // HOST_CORES`` rather than ``nprocs=...``."""
    if expr is None or expr is UNKNOWN:
        return "..."
    try:
        text = ast.unparse(expr)
    except Exception:  # a malformed tree from some host: never crash the message
        return render(expr)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "\u2026"


_v = api_table.vtuple


def env_writes(model: Model):
    """``(key, node, ctx)`` of every literal environment variable write that may configure
    torch_xla: anywhere in the module, whatever it imports (a launcher sets the variables
    before torch_xla is imported; an Accelerate script never imports it), except in
    branches XLA never takes (the CUDA branch of ``if torch.cuda.is_available():``, the
    ``else`` of ``if use_tpu:``) and functions only they call."""
    for key, node, _, ctx in model.env_writes():
        if not model.is_xla_off(ctx):
            yield key, node, ctx


def gpu_script(model: Model) -> bool:
    """The module configures torch_xla for GPUs: it writes ``GPU_NUM_DEVICES`` or a variable
    whose literal value names ``GPU`` / ``CUDA`` (``XRT_DEVICE_MAP="GPU:0;..."``,
    ``PJRT_DEVICE="CUDA"``). Memoised."""
    found = model._cache.get("gpu_script")
    if found is None:
        found = False
        for key, _, value, ctx in model.env_writes():
            text = model.const(value, ctx) if value is not None else None
            if key == "GPU_NUM_DEVICES" or isinstance(text, str) and re.search(r"(?i)\b(gpu|cuda)\b", text):
                found = True
                break
        model._cache["gpu_script"] = found
    return found


def xm_spelling(model: Model) -> str:
    """How the module names ``torch_xla.core.xla_model``: the name a module-level import binds
    to it (``xm``, ``xla_model``), else the full dotted name (after ``--fix`` dropped the
    ``xm`` import, a suggestion of ``xm.add_step_closure`` would name nothing). Memoised."""
    found = model._cache.get("xm_spelling")
    if found is None:
        names = sorted(name for name, entries in model.module_scope.bindings.items()
                       if entries and all(k == "import" and t == "torch_xla.core.xla_model" for _, k, t, _ in entries))
        found = "xm" if "xm" in names else names[0] if names else "torch_xla.core.xla_model"
        model._cache["xm_spelling"] = found
    return found


def pjrt_fix(model: Model, fix: str) -> str:
    """``fix`` with the PJRT device a GPU script needs (``PJRT_DEVICE=CUDA``, :func:`gpu_script`)."""
    if "PJRT_DEVICE=TPU" in fix and gpu_script(model):
        return fix.replace("PJRT_DEVICE=TPU", "PJRT_DEVICE=CUDA")
    return fix


def env_finding(rule_obj, model: Model, codes):
    """``rule_obj``'s findings for writes of the environment variables of ``api_table.env_vars``
    whose entry has one of ``codes``, deprecated or without effect in the target release.

    A pattern entry (``XRT_*``) covers every name under it in XLA code; in a module that
    is not XLA code only the names some torch_xla release reads count (``XRT_TPU_CONFIG``,
    not a reporting service's ``XRT_ENDPOINT``)."""
    target = rule_obj.settings.target_version
    xla_module = model.uses_torch_xla or rule_obj.settings.scope == "always"
    for key, node, ctx in env_writes(model):
        found = api_table.env_var(key)
        if found is None or not (xla_module or key in api_table.read_env_vars()):
            continue
        _, entry = found
        if entry["code"] not in codes or target < _v(entry["deprecated"]):
            continue
        until = entry.get("no_effect_until")
        if entry["no_effect"] is not None and target >= _v(entry["no_effect"]) and (until is None or target <= _v(until)):
            problem = f"{key} has no effect since torch_xla {entry['no_effect']}"
        else:
            problem = f"{key} is deprecated since torch_xla {entry['deprecated']}"
        yield rule_obj.finding(node, problem, pjrt_fix(model, entry["fix"]))
