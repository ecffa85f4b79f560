"""XLA7: mixed precision on XLA."""

from __future__ import annotations

import ast

from .. import api_table
from ..model.runtime import str_value
from ..model.scopes import param_default
from ..model.tensors import TORCH_FACTORIES
from ..registry import ENV, Rule, rule
from ._common import env_finding

CUDA_AUTOCAST = ("torch.cuda.amp.autocast", "torch.cuda.amp.autocast_mode.autocast")
GENERIC_AUTOCAST = ("torch.autocast", "torch.amp.autocast", "torch.amp.autocast_mode.autocast")
XLA_AUTOCAST = ("torch_xla.amp.autocast", "torch_xla.amp.autocast_mode.autocast")
GRAD_SCALERS = ("torch.cuda.amp.GradScaler", "torch.amp.GradScaler", "torch.cuda.amp.grad_scaler.GradScaler",
                "torch.amp.grad_scaler.GradScaler", "torch_xla.amp.GradScaler")
FP16 = ("torch.float16", "torch.half")


def _disabled_on_xla(model, call, ctx) -> bool:
    """``enabled=False``, or ``enabled=<a CUDA test>`` (False wherever XLA runs), also through
    what a name, a ``self.`` attribute or a parameter holds (:func:`_false_on_xla`)."""
    enabled = model.kwarg(call, "enabled")
    if enabled is None or not isinstance(enabled, ast.AST):
        return False
    return _false_on_xla(model, enabled, ctx)


def _false_on_xla(model, expr, ctx, depth: int = 0) -> bool:
    """``False`` or a CUDA test (``torch.cuda.is_available()``, ``args.cuda``) wherever XLA
    runs: the expression itself, or every value it may hold: the assignments of a name or a
    ``self.`` attribute (``use_amp = torch.cuda.is_available()``), a parameter's default and
    the arguments this module's calls pass for it. Unknown values say no."""
    if model.const(expr, ctx) is False:
        return True
    off_when_true, _ = model._classify(expr)
    if off_when_true:
        return True
    if depth > 4 or type(expr) not in (ast.Name, ast.Attribute) or model.qualname(expr, ctx) is not None:
        return False
    values = model.values(expr, ctx)
    if values is None and type(expr) is ast.Name:
        values = _param_values(model, expr, ctx)
    return bool(values) and all(v is not None and c is not None and _false_on_xla(model, v, c, depth + 1)
                                for v, c in values)


def _param_values(model, name, ctx):
    """What a parameter may hold: its default and what each call of its function in the
    module passes (``None``: unknown: no default and no visible call, a splat, ...)."""
    bindings = model.lookup(name.id, ctx, getattr(name, "lineno", None)) or ()
    if len(bindings) != 1 or bindings[0][1] != "param" or not hasattr(bindings[0][2], "params"):
        return None
    func = bindings[0][2]
    default = param_default(func.node.args, name.id)
    if model.project_arguments_seen(func, name.id):
        return None  # another project module passes one: what it is, is not seen here
    passed = model.passed_arguments(func, name.id)
    out = [(default, func.ctx)] if default is not None else []
    for arg, _, cctx in passed:
        if arg is None and default is not None:
            continue  # the default
        if not isinstance(arg, ast.AST):
            return None  # no default, or a splat may supply it
        out.append((arg, cctx))
    return out or None


def _device_type(model, call, ctx):
    value = str_value(model, model.kwarg(call, "device_type", 0), ctx)
    return value.split(":")[0].lower() if value else None


@rule
class CudaAutocastOnXla(Rule):
    """## What it does
    Flags CUDA autocast in XLA code: `torch.cuda.amp.autocast(...)`,
    `torch.autocast("cuda", ...)`, `torch.amp.autocast(device_type="cuda", ...)`.

    ## Why is this bad?
    Autocast for the CUDA device type does not apply to XLA tensors: the forward pass runs
    in full precision and the mixed precision the script asks for silently never happens.

    ## Known problems
    XLA:GPU code targeting torch_xla 2.8 or older, where `torch.cuda.amp.autocast` was
    documented to work on XLA:GPU, is reported too; silence it with `# noqa: XLA701`.

    ## Example
    ```python
    with torch.cuda.amp.autocast():
        loss = loss_fn(model(x), y)
    ```

    ## Use instead
    ```python
    with torch.autocast("xla", dtype=torch.bfloat16):
        loss = loss_fn(model(x), y)
    ```

    ## References
    - torch_xla `docs/source/perf/amp.md` "AMP for XLA:TPU"; `examples/train_resnet_amp.py`
    - torch_xla `torch_xla/amp/autocast_mode.py`
    - Applies to torch_xla 2.0-2.9.
    """

    code = "XLA701"
    name = "cuda-autocast-on-xla"
    message = "CUDA autocast does not apply to XLA tensors"
    fix = 'use torch.autocast("xla", dtype=torch.bfloat16)'
    severity = "W"
    versions = "2.0+"
    reported_at = 'the autocast call'
    bad = ["import torch\nimport torch_xla\ndef f(m, x):\n    with torch.cuda.amp.autocast():\n        return m(x)\n",
           "import torch\nimport torch_xla\ndef f(m, x):\n    with torch.autocast(device_type='cuda'):\n        return m(x)\n"]
    good = ["import torch\nimport torch_xla\ndef f(m, x):\n    with torch.autocast('xla', dtype=torch.bfloat16):\n"
            "        return m(x)\n"]

    def check(self, model):
        for call, ctx in model.calls_to(*CUDA_AUTOCAST, *GENERIC_AUTOCAST):
            if not model.in_xla_code(ctx):
                continue
            q = model.call_name(call, ctx)
            if (q in GENERIC_AUTOCAST and _device_type(model, call, ctx) != "cuda") or _disabled_on_xla(model, call, ctx):
                continue
            yield self.finding(call)


@rule
class GradScalerOnTpu(Rule):
    """## What it does
    Flags a gradient scaler in XLA code: `torch.cuda.amp.GradScaler()`,
    `torch.amp.GradScaler()`, `torch_xla.amp.GradScaler()`.

    ## Why is this bad?
    TPUs use bfloat16 mixed precision, which needs no loss scaling: the scaler only adds
    host syncs for its inf checks. `torch_xla.amp.GradScaler` was removed in torch_xla 2.9
    (`ImportError` / `AttributeError`).

    ## Known problems
    `GradScaler(enabled=False)` and `enabled=torch.cuda.is_available()` (False on a TPU
    host; also through a name, a `self.` attribute or a parameter whose default or every
    argument of the module's calls is one) are not reported. fp16 on XLA:GPU (torch_xla 2.8 or older)
    did use a scaler; silence it with `# noqa: XLA702`.

    ## Example
    ```python
    scaler = torch.cuda.amp.GradScaler()
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    ```

    ## Use instead
    ```python
    loss.backward()
    xm.optimizer_step(optimizer)
    ```
    With DDP or XLA FSDP, which reduce the gradients themselves, `optimizer.step()`
    instead of `xm.optimizer_step(optimizer)`.

    ## References
    - torch_xla `docs/source/perf/amp.md` ("Since TPU's use bfloat16 mixed precision, gradient scaling is not necessary")
    - torch_xla `torch_xla/amp/__init__.py` (GradScaler 2.0-2.8, removed 2.9, #9608)
    - Applies to torch_xla 2.0-2.9.
    """

    code = "XLA702"
    name = "gradscaler-on-tpu"
    message = "GradScaler on TPU: bf16 needs no loss scaling"
    fix = "drop it: loss.backward(), then xm.optimizer_step(optimizer)"
    FIX_WRAPPED = "drop it: loss.backward(), then optimizer.step()"  # DDP/FSDP reduce the gradients
    severity = "W"
    versions = "2.0+ (torch_xla.amp.GradScaler removed 2.9)"
    reported_at = 'the `GradScaler(...)` call'
    bad = ["import torch\nimport torch_xla\nscaler = torch.cuda.amp.GradScaler()\n",
           "from torch_xla.amp import GradScaler\nscaler = GradScaler()\n"]
    good = ["import torch\nimport torch_xla\nscaler = torch.amp.GradScaler(enabled=False)\n"]

    def check(self, model):
        removed = {e["name"]: e["removed"] for e in api_table.changes() if e["code"] == self.code}
        target = self.settings.target_version
        for call, ctx in model.calls_to(*GRAD_SCALERS):
            if not model.in_xla_code(ctx) or _disabled_on_xla(model, call, ctx):
                continue
            q = model.call_name(call, ctx)
            # with DDP/FSDP the optimizer step is the plain one: xm.optimizer_step would reduce twice
            fix = self.FIX_WRAPPED if model.reduces_gradients_elsewhere() else None
            if q in removed and target >= api_table.vtuple(removed[q]):
                yield self.finding(call, f"torch_xla.amp.GradScaler was removed in torch_xla {removed[q]}", fix)
            else:
                yield self.finding(call, None, fix)


@rule
class Fp16AutocastOnTpu(Rule):
    """## What it does
    Flags XLA autocast asked for float16: `torch.autocast("xla", dtype=torch.float16)`,
    `torch_xla.amp.autocast(device, dtype=torch.half)`.

    ## Why is this bad?
    On TPU, torch_xla's autocast supports only bfloat16: with any other dtype it warns
    "Disabling autocast" and runs everything in full precision.

    ## Example
    ```python
    with torch.autocast("xla", dtype=torch.float16):
        out = model(x)
    ```

    ## Use instead
    ```python
    with torch.autocast("xla", dtype=torch.bfloat16):
        out = model(x)
    ```

    ## References
    - torch_xla `torch_xla/amp/autocast_mode.py` ("TPU Autocast only supports dtype of torch.bfloat16 currently")
    - torch_xla `docs/source/perf/amp.md`
    - Applies to torch_xla 2.1-2.9 (the TPU dtype check first appears in 2.1).
    """

    code = "XLA703"
    name = "fp16-autocast-on-tpu"
    message = "float16 autocast on XLA: TPU autocast takes only bfloat16"
    fix = "use dtype=torch.bfloat16"
    severity = "W"
    versions = "2.1+"
    reported_at = 'the autocast call'
    bad = ["import torch\nimport torch_xla\ndef f(m, x):\n    with torch.autocast('xla', dtype=torch.float16):\n"
           "        return m(x)\n"]
    good = ["import torch\nimport torch_xla\ndef f(m, x):\n    with torch.autocast('xla', dtype=torch.bfloat16):\n"
            "        return m(x)\n"]

    def check(self, model):
        if self.settings.target_version < (2, 1):
            return  # 2.0's torch_xla.amp.autocast is torch.cuda.amp.autocast: no TPU check
        for call, ctx in model.calls_to(*GENERIC_AUTOCAST, *XLA_AUTOCAST):
            if not model.in_xla_code(ctx):
                continue
            q = model.call_name(call, ctx)
            if q in GENERIC_AUTOCAST and _device_type(model, call, ctx) != "xla":
                continue
            # torch.autocast(device_type, dtype, ...); torch_xla.amp.autocast(device, enabled, dtype, ...)
            dtype = model.kwarg(call, "dtype", 2 if q in XLA_AUTOCAST else 1)
            if isinstance(dtype, ast.AST) and model.qualname(dtype, ctx) in FP16:
                yield self.finding(call)


@rule
class DeprecatedPrecisionEnv(Rule):
    """## What it does
    Flags `XLA_USE_BF16`, `XLA_DOWNCAST_BF16`, `XLA_USE_FP16`, `XLA_DOWNCAST_FP16` and
    `XLA_USE_32BIT_LONG` set in `os.environ` (every spelling: `[...] =`, `setdefault`,
    `update`, `putenv`).

    ## Why is this bad?
    The BF16 variables are deprecated since 2.4 ("please convert your model to bf16
    directly"); the FP16 ones have no effect since 2.5; `XLA_USE_32BIT_LONG` is listed as
    deprecated in 2.5.

    ## Known problems
    AWS Neuron still relies on the BF16 variables; silence with `# noqa: XLA705`.
    Reported wherever the variables are set, whatever the module imports (a launcher sets
    them before torch_xla is imported), except in branches XLA never takes
    (`if torch.cuda.is_available():`, the `else` of `if use_tpu:`).

    ## Example
    ```python
    os.environ["XLA_USE_BF16"] = "1"
    ```

    ## Use instead
    ```python
    model = model.to(torch.bfloat16)      # or: with torch.autocast("xla", dtype=torch.bfloat16):
    ```
    For the FP16 variables, `torch.autocast("xla", dtype=torch.bfloat16)` (TPUs compute
    in bf16); for `XLA_USE_32BIT_LONG`, nothing: cast index tensors explicitly where
    32-bit is wanted.

    ## References
    - torch_xla `torch_xla/csrc/dtype.cpp` (deprecation notices 2.4-2.6+)
    - torch_xla `torch_xla/__init__.py` `_check_deprecated_env_var` (2.5+)
    - Every release 2.0-2.9 reads all five names (`dtype.cpp` `GetEnvBool`, or
      `_check_deprecated_env_var`; `flake8_xla/data/torch_xla_env_vars.json`)
    - Reported from `--xla-version=2.4` on.
    """

    code = "XLA705"
    name = "deprecated-precision-env"
    message = "deprecated precision environment variable"
    fix = "cast the model or use autocast"
    scope = ENV
    severity = "C"
    versions = "deprecated 2.4 (BF16), no effect 2.5 (FP16)"
    reported_at = 'the environment write: the `os.environ["..."]` target, the `setdefault(...)` / `putenv(...)` call, or the key in `os.environ.update({...})`'
    bad = ["import os\nimport torch_xla\nos.environ['XLA_USE_BF16'] = '1'\n",
           "import os\nimport torch_xla\nos.environ.setdefault('XLA_DOWNCAST_FP16', '1')\n",
           "import os\nos.environ['XLA_USE_BF16'] = '1'  # no torch_xla import: a launcher\n"]
    good = ["import os\nimport torch_xla\nos.environ['PJRT_DEVICE'] = 'TPU'\n",
            "import os\nimport torch\nif torch.cuda.is_available():\n    os.environ['XLA_USE_BF16'] = '1'\n"]

    def check(self, model):
        yield from env_finding(self, model, ("XLA705",))


#: what a ``dtype=`` of a module or tensor builder may name for float16
FP16_STRINGS = ("float16", "half", "fp16")
#: calls whose arguments are written out (an fp16 copy exported from the device is no TPU compute)
_EXPORTS = ("torch.save", "torch.onnx.export", "torch.jit.save", "safetensors.torch.save_file",
            "safetensors.torch.save", "safetensors.torch.save_model", "torch_xla.core.xla_model.save")
_EXPORT_METHODS = frozenset({"save_pretrained", "push_to_hub", "save_model", "save_checkpoint"})
#: transformers builders whose ``torch_dtype=`` (``dtype=`` since 4.56) sets the weights' dtype
_PRETRAINED_METHODS = frozenset({"from_pretrained", "from_config", "_from_config"})
_PIPELINES = ("transformers.pipeline", "transformers.pipelines.pipeline")
_GPU_DEVICES = ("CUDA", "GPU", "ROCM")
_RECEIVER_HOST = frozenset({"cpu", "numpy", "state_dict", "detach_cpu"})


@rule
class Fp16OnTpu(Rule):
    """## What it does
    Flags float16 asked for in XLA code: `x.half()` and `x.to(torch.float16)` (also
    `.to(device, torch.half)`, `.to(dtype=...)`) of a module or of a tensor on the device
    (moved in the same call or before it in the chain), `dtype=torch.float16` on a torch
    factory that builds off the CPU (`torch.zeros(..., device=device, dtype=torch.half)`) or
    whose CPU tensor is moved to the device at once (`torch.ones(3, dtype=torch.half).to(device)`),
    `torch_dtype=torch.float16` (or `dtype=`, `"float16"`) on a transformers or diffusers
    `from_pretrained` / `from_config`, or a transformers `pipeline(...)`, and
    `torch.set_default_dtype(torch.float16)`. Reported at the `.half` method or at the dtype
    argument.

    ## Why is this bad?
    TPUs compute in bfloat16 and have no float16 units. XLA:TPU lowers some float16 ops
    (elementwise ones, upcast inside) and not others: models converted to float16 have
    failed to compile or aborted (transformers#22690, 2023: SIGABRT in a division after
    `model.half()`; pytorch/xla#8223, 2024: a diffusers pipeline loaded with
    `torch_dtype=torch.float16`), and what runs is no faster than bfloat16 while keeping
    float16's narrow range (overflow without a loss scaler). bfloat16 has float32's range,
    needs no loss scaling, and is what the TPU matrix units take.

    ## Known problems
    Silent in branches XLA never takes (`if torch.cuda.is_available():`), in a module that
    sets `PJRT_DEVICE` to `CUDA` / `GPU` or imports Triton kernels (XLA:GPU, which computes
    in float16: torch_xla runs Triton kernels on GPUs only), for a receiver the model cannot
    place (a parameter nothing moves, a tensor an op built on the CPU), for a copy visibly
    on the CPU (`model.cpu().half()`, `x.to("cpu", torch.float16)`, a CPU factory) or one
    written out (`torch.save(...)`, `save_pretrained(...)` arguments), and for dtype
    comparisons (`if x.dtype == torch.float16:`). A dtype held in a name is followed through
    plain assignments; `dtype=torch.float16 if fp16 else ...` is unknown and not reported.
    Autocast dtypes are XLA703's. Code that tests float16 on purpose (torch_xla's own
    tests) is reported: silence it with `# noqa: XLA706`.

    Measured on 2.9 (CPU, one replica): float16 forward and backward of a `Linear` run on
    XLA:CPU, which has float16, so the TPU's failures cannot be shown there. torch_xla's
    TPU CI runs a float16 `scan` carry (`test/scan/test_scan.py`,
    `test_scan_different_dtypes`, listed in `test/tpu/run_tests.sh`): elementwise float16
    works on current TPUs; the rule's premise is the failing ops and the lost range, not
    that every float16 op fails.

    ## Example
    ```python
    model = AutoModel.from_pretrained(name, torch_dtype=torch.float16)
    model = model.to(torch_xla.device()).half()
    ```

    ## Use instead
    ```python
    model = AutoModel.from_pretrained(name, torch_dtype=torch.bfloat16)
    model = model.to(torch_xla.device()).bfloat16()
    ```

    ## References
    - huggingface/transformers#22690 ("TPUs do not support float16, only bfloat16"; the
      SIGABRT with `model.half()`); pytorch/xla#8223 (float16 diffusers pipeline on TPU);
      pytorch/xla#3041, #2939 ("float16 ... is not supported on TPU. TPU uses bfloat16")
    - torch_xla `docs/source/perf/amp.md` ("TPUs natively support bfloat16");
      `torch_xla/amp/autocast_mode.py` (TPU autocast takes only bfloat16)
    - Applies to torch_xla 2.0-2.9.
    """

    code = "XLA706"
    name = "fp16-on-tpu"
    message = "float16 in XLA code: not a TPU compute type, ops can fail to compile"
    fix = "use torch.bfloat16"
    FIX_HALF = "use .bfloat16()"
    severity = "E"
    versions = "2.0+"
    fix_applicability = "unsafe"
    reported_at = 'the `.half` of `x.half()`, or the float16 dtype argument'
    bad = ["import torch\nimport torch_xla\nmodel = torch.nn.Linear(2, 2).to(torch_xla.device()).half()\n",
           "import torch\nimport torch_xla\nfrom transformers import AutoModel\n"
           "model = AutoModel.from_pretrained('gpt2', torch_dtype=torch.float16)\n"]
    good = ["import torch\nimport torch_xla\nmodel = torch.nn.Linear(2, 2).to(torch_xla.device()).bfloat16()\n",
            "import torch\nimport torch_xla\nmodel = torch.nn.Linear(2, 2)\n"
            "if torch.cuda.is_available():\n    model = model.cuda().half()\n"]

    def check(self, model):
        if any(key == "PJRT_DEVICE" and str(model.const(value, ctx)).upper() in _GPU_DEVICES
               for key, _, value, ctx in model.env_writes() if value is not None):
            return  # XLA:GPU: float16 is a GPU compute type
        if any("triton" in (node.module or "") or "triton" in alias.name for node, alias, _, _ in model.import_froms) \
                or any("triton" in alias.name for _, alias, _, _ in model.imports):
            return  # Triton kernels run on XLA:GPU only (torch_xla.experimental.triton)
        exported = None
        for call, ctx in model.method_calls("half"):
            if call.args or call.keywords or not model.in_xla_code(ctx) or model.call_name(call, ctx) is not None:
                continue
            exported = exported if exported is not None else _export_args(model)
            if not self._on_host(model, call.func.value, ctx) and id(call) not in exported \
                    and self._device_side(model, call, ctx):
                yield self.finding(call.func, None, self.FIX_HALF)
        for call, ctx in model.method_calls("to"):
            if not model.in_xla_code(ctx) or model.call_name(call, ctx) is not None:
                continue
            args = [a for a in call.args if type(a) is not ast.Starred] + [
                k.value for k in call.keywords if k.arg in ("dtype", None)]
            for arg in args:
                if self._fp16(model, arg, ctx, strings=False):
                    exported = exported if exported is not None else _export_args(model)
                    if not (self._on_host(model, call.func.value, ctx) or model.move_target(call, ctx) == "cpu"
                            or model._to_cpu(call, ctx) or id(call) in exported) \
                            and self._device_side(model, call, ctx):
                        yield self.finding(arg)
                    break
            else:  # torch.ones(3, dtype=torch.half).to(device): a float16 CPU tensor moved to the device
                receiver = call.func.value
                if type(receiver) is ast.Call and model.call_name(receiver, ctx) in TORCH_FACTORIES \
                        and model.kwarg(receiver, "device") is None and model._to_xla(call, ctx):
                    arg = model.kwarg(receiver, "dtype")
                    if isinstance(arg, ast.AST) and self._fp16(model, arg, ctx, strings=False):
                        yield self.finding(arg)
        for call, ctx in model.keyword_calls("dtype", "torch_dtype"):
            if not model.in_xla_code(ctx):
                continue
            arg = self._builder_dtype(model, call, ctx)
            if arg is not None:
                yield self.finding(arg)
        for call, ctx in model.calls_to("torch.set_default_dtype"):
            arg = model.kwarg(call, "d", 0)
            if model.in_xla_code(ctx) and isinstance(arg, ast.AST) and self._fp16(model, arg, ctx, strings=False):
                yield self.finding(arg)

    def _builder_dtype(self, model, call, ctx):
        """The float16 ``dtype=`` / ``torch_dtype=`` of a torch factory building off the CPU or
        of a transformers builder; None otherwise."""
        f = call.func
        q = model.call_name(call, ctx)
        if q in TORCH_FACTORIES:
            arg = model.kwarg(call, "dtype")
            if not isinstance(arg, ast.AST) or not self._fp16(model, arg, ctx, strings=False):
                return None
            dev = model.kwarg(call, "device")
            if dev is None and not model.default_device_set():
                return None  # a CPU tensor
            if isinstance(dev, ast.AST) and model._factory_kind(call, ctx) == "host":
                return None
            return arg
        if q in _PIPELINES or (type(f) is ast.Attribute and f.attr in _PRETRAINED_METHODS and (
                q is None or q.startswith(("transformers.", "diffusers.")))):
            for name in ("torch_dtype", "dtype"):
                arg = model.kwarg(call, name)
                if isinstance(arg, ast.AST) and self._fp16(model, arg, ctx, strings=True):
                    return arg
        return None

    @staticmethod
    def _fp16(model, arg, ctx, strings: bool) -> bool:
        """``arg`` is ``torch.float16`` / ``torch.half`` (through module aliases), or with
        ``strings`` the transformers spelling ``"float16"``."""
        if type(arg) in (ast.Name, ast.Attribute) and model.qualname(arg, ctx) in FP16:
            return True
        if strings:
            value = model.const(arg, ctx)
            return isinstance(value, str) and value.lower() in FP16_STRINGS
        return False

    @staticmethod
    def _device_side(model, call, ctx) -> bool:
        """``x.half()`` / ``x.to(...)`` works on the device: the call moves to the XLA device
        (``.to(device, torch.half)``), its receiver is a device tensor or was moved there in
        its chain (``model.to(device).half()``), or it is a module (which XLA code trains on
        the device); an unknown receiver (a CPU tensor built by an op) is not."""
        if model._to_xla(call, ctx):
            return True
        receiver = call.func.value
        if model.tensor_kind(receiver, ctx) == "device" or _moved_to_xla(model, receiver, ctx):
            return True
        node = receiver
        for _ in range(16):
            if type(node) is ast.Call and type(node.func) is ast.Attribute:
                if node.func.attr in ("to", "xla") and model.move_target(node, ctx) == "xla":
                    return True
                node = node.func.value
            elif type(node) in (ast.Attribute, ast.Subscript):
                node = node.value
            else:
                break
        if type(node) is ast.Call:
            return _builds_model(model, node, ctx)  # Net().half(), AutoModel.from_pretrained(...).half()
        return type(node) in (ast.Name, ast.Attribute) and model.is_model(node, ctx)

    @staticmethod
    def _on_host(model, receiver, ctx) -> bool:
        """The receiver is visibly a CPU copy: ``.cpu()`` / ``.numpy()`` / ``.state_dict()``
        / ``.to("cpu")`` in its chain, or a tensor built on the CPU."""
        node = receiver
        for _ in range(16):
            if type(node) is ast.Call:
                f = node.func
                if type(f) is ast.Attribute and (f.attr in _RECEIVER_HOST or (
                        f.attr == "to" and model._to_cpu(node, ctx))):
                    return True
                node = f.value if type(f) is ast.Attribute else None
            elif type(node) in (ast.Attribute, ast.Subscript):
                node = node.value
            else:
                break
        return model.cpu_tensor(receiver, ctx)


def _moved_to_xla(model, expr, ctx, depth: int = 0) -> bool:
    """``expr`` is a name every value of which was moved to the XLA device in its chain
    (``x = batch["pixel_values"].to(device, torch.float16)``; ``y = x.to(dtype=...)``), or is
    such a name itself moved again; a few levels of names."""
    if type(expr) is not ast.Name or depth > 4:
        return False
    values = model.values(expr, ctx)
    if not values:
        return False
    for value, vctx in values:
        node, moved = value, False
        for _ in range(16):
            if type(node) is ast.Call and type(node.func) is ast.Attribute:
                if node.func.attr in ("to", "xla") and model.move_target(node, vctx) == "xla":
                    moved = True
                    break
                node = node.func.value
            elif type(node) in (ast.Attribute, ast.Subscript):
                node = node.value
            else:
                break
        if not moved and not _moved_to_xla(model, node, vctx, depth + 1):
            return False
    return True


def _builds_model(model, call, ctx) -> bool:
    """``Net(...)`` / ``AutoModel.from_pretrained(...)``: a call that builds a module."""
    return model._model_value(call, ctx)


def _export_args(model) -> set[int]:
    """ids of the calls inside the arguments of a save or export call."""
    out: set[int] = set()
    sites = list(model.calls_to(*_EXPORTS)) + list(model.method_calls(*_EXPORT_METHODS))
    for call, _ in sites:
        for arg in list(call.args) + [k.value for k in call.keywords]:
            out.update(id(n) for n in ast.walk(arg) if type(n) is ast.Call)
        f = call.func
        if type(f) is ast.Attribute and f.attr in _EXPORT_METHODS:
            out.update(id(n) for n in ast.walk(f.value) if type(n) is ast.Call)  # model.half().save_pretrained()
    return out


XLA_GRAD_SCALERS = ("torch_xla.amp.GradScaler", "torch_xla.amp.grad_scaler.GradScaler")
#: plain torch optimizers torch_xla.amp.syncfree has a sync-free version of
SYNCFREE = {"torch.optim.SGD": "SGD", "torch.optim.Adam": "Adam", "torch.optim.AdamW": "AdamW",
            "torch.optim.sgd.SGD": "SGD", "torch.optim.adam.Adam": "Adam", "torch.optim.adamw.AdamW": "AdamW"}


@rule
class AmpNonSyncfreeOptimizer(Rule):
    """## What it does
    Flags the constructor of a plain `torch.optim.SGD` / `Adam` / `AdamW` that a
    `torch_xla.amp.GradScaler` steps (`scaler.step(optimizer)`), in XLA code, when the
    target torch_xla still has that scaler (2.8 or older). A hint, reported at the
    optimizer's constructor, where the fix goes.

    ## Why is this bad?
    torch_xla's `GradScaler.step` checks the gradients for inf/NaN before stepping. With
    a plain optimizer it does so on the host: `torch_xla.sync()` and a `.item()` read of
    the found-inf flags, a graph cut and a device-to-host transfer every step. The
    `torch_xla.amp.syncfree` optimizers take the flag as a tensor (`found_inf`) and skip
    the update on the device, with no sync.

    ## Known problems
    Not reported for a scaler built with `use_zero_grad=True` (it avoids the sync another
    way) or `enabled=False`, for optimizers with no sync-free version (only SGD, Adam and
    AdamW have one), for CUDA's `torch.cuda.amp.GradScaler` (it never passes `found_inf`:
    syncfree optimizers would not help), or when the optimizer's construction cannot be
    seen. From torch_xla 2.9 `torch_xla.amp.GradScaler` is gone: XLA702 reports it then.

    ## Example
    ```python
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    scaler = torch_xla.amp.GradScaler()
    ...
    scaler.step(optimizer)
    ```

    ## Use instead
    ```python
    from torch_xla.amp import syncfree
    optimizer = syncfree.AdamW(model.parameters(), lr=1e-4)
    ```

    ## References
    - torch_xla `torch_xla/amp/grad_scaler.py` `_maybe_opt_step` (`found_inf` for syncfree optimizers, else `mark_step`/`sync` and `.item()`)
    - torch_xla `docs/source/perf/amp.md` ("modified version of optimizers that avoid the additional sync between device and host")
    - Applies to torch_xla 2.0-2.8 (the scaler was removed in 2.9).
    """

    code = "XLA704"
    hint = True

    reported_at = "the plain optimizer's constructor (`torch.optim.SGD(...)`)"
    name = "amp-non-syncfree-optimizer"
    message = "torch_xla GradScaler with a plain optimizer syncs every step"
    fix = "use its torch_xla.amp.syncfree version"
    severity = "W"
    versions = "2.0-2.8"
    bad = [
        "# options: --xla-version=2.8\nimport torch\nimport torch_xla.amp\n"
        "def f(model, loss):\n"
        "    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)\n"
        "    scaler = torch_xla.amp.GradScaler()\n"
        "    scaler.scale(loss).backward()\n"
        "    scaler.step(opt)\n",
    ]
    good = [
        "# options: --xla-version=2.8\nimport torch\nimport torch_xla.amp\nfrom torch_xla.amp import syncfree\n"
        "def f(model, loss):\n"
        "    opt = syncfree.AdamW(model.parameters(), lr=1e-4)\n"
        "    scaler = torch_xla.amp.GradScaler()\n"
        "    scaler.scale(loss).backward()\n"
        "    scaler.step(opt)\n",
    ]

    def check(self, model):
        removed = next(e["removed"] for e in api_table.changes() if e["name"] == "torch_xla.amp.GradScaler")
        if self.settings.target_version >= api_table.vtuple(removed):
            return  # no torch_xla GradScaler any more: XLA702 reports the removed name
        reported = set()
        for call, ctx in model.method_calls("step"):
            f = call.func
            if not call.args or not model.in_xla_code(ctx):
                continue
            if not self._xla_scaler(model, f.value, ctx):
                continue
            for cons, cctx in model.optimizer_constructions(call.args[0], ctx) or ():
                q = model.call_name(cons, cctx)
                if q in SYNCFREE and id(cons) not in reported and model.in_xla_code(cctx):
                    reported.add(id(cons))
                    yield self.finding(cons, f"torch_xla GradScaler with a plain {SYNCFREE[q]} syncs every step",
                                       f"use torch_xla.amp.syncfree.{SYNCFREE[q]}")

    @staticmethod
    def _xla_scaler(model, expr, ctx) -> bool:
        """``expr`` holds ``torch_xla.amp.GradScaler(...)`` (every visible value), enabled and
        without ``use_zero_grad=True``."""
        values = model.resolve_values(expr, ctx)
        # `scaler = GradScaler() if fp16 else None`: a None scaler is never the one stepping
        values = [(v, c) for v, c in values or () if not (type(v) is ast.Constant and v.value is None)]
        if not values:
            return False
        for v, c in values:
            if type(v) is not ast.Call or model.call_name(v, c) not in XLA_GRAD_SCALERS:
                return False
            if _disabled_on_xla(model, v, c):
                return False
            zero = model.kwarg(v, "use_zero_grad", 5)
            if zero is not None and model.const(zero, c) is not False:
                return False  # use_zero_grad=True (or unknown) avoids the host sync
        return True
