"""XLA4 (modules): a trained module left on the host, an optimizer built before its module moves."""

from __future__ import annotations

import ast

from ..registry import Rule, rule
from ._common import device_call, render


def _short(name: str, limit: int = 24) -> str:
    return name if len(name) <= limit else "the module"


@rule
class ModuleNotOnDevice(Rule):
    """## What it does
    In XLA code, flags a module built in a function (a module constructor: a `torch.nn`
    layer, a module class of this file, a torchvision / timm / transformers model; or a
    module function whose every `return` is one) whose parameters an optimizer updates in
    a training step loop (`optimizer.step()` or `xm.optimizer_step(optimizer)`), when the
    function never moves it to a device. Reported at the assignment that binds the module.
    A module a trainer class holds in `self.model` (bound once, in `__init__` or any
    method) counts too when no method of the class hierarchy moves it or hands it on and
    nothing outside the class reads `.model` of an instance.

    ## Why is this bad?
    A module lives on the CPU until it is moved. Once the batches come from
    `pl.MpDeviceLoader` (or are moved to `torch_xla.device()`), the first forward fails
    (`RuntimeError: Expected XLA tensor. Got: torch.FloatTensor`, torch_xla 2.9 on the CPU
    device); with batches on the CPU too, the whole "XLA" training runs on the host. The
    torch_xla README's multi-processing port adds `model.to(xm.xla_device())` for exactly
    this.

    ## Known problems
    Not reported when the module arrives as a parameter, is handed to any call other than
    its own forward, its methods and a few builtins (`prepare(model)`, `DDP(model)`,
    `fit(model, ...)`: the callee may move it, unknown), is aliased, stored or returned, is
    moved anywhere in the function (`.to(...)` to any device, `.cuda()`, `.to_empty()`),
    is built with `device=` or under `torch.set_default_device` / `with torch.device(...)`,
    is wrapped by XLA FSDP (which moves it), or when the function visibly trains on the
    CPU (`x.to("cpu")`), or places things on the device but feeds the module only host data
    (a CPU net kept on purpose). A module the function never calls whose optimizer also
    updates a module it moves to the device (a head forgotten in the move) is reported. A
    module bound at module level is not followed.

    ## Example
    ```python
    def _mp_fn(index):
        model = nn.Linear(10, 2)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        for inputs, labels in pl.MpDeviceLoader(loader, torch_xla.device()):
            ...
            xm.optimizer_step(optimizer)
    ```

    ## Use instead
    ```python
    def _mp_fn(index):
        model = nn.Linear(10, 2)
        model.to(torch_xla.device())
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    ```

    ## References
    - torch_xla `README.md` multi-processing diff (`+ model.to(xm.xla_device())`, "Move the model paramters to your XLA device")
    - torch_xla `docs/source/learn/migration-to-xla-on-tpus.md` ("Create the model and move it to the process-specific XLA device", then "Create the optimizer")
    - Applies to every torch_xla release.
    """

    code = "XLA404"
    fix_applicability = "unsafe"
    name = "module-not-on-device"
    message = "module is never moved to the XLA device"
    fix = "call model.to(torch_xla.device()) after building it"
    severity = "E"
    versions = "2.0+"
    reported_at = "the assignment that binds the module (`model = Net()`) in the function that trains it"
    bad = [
        "import torch, torch_xla\nimport torch_xla.core.xla_model as xm\nfrom torch import nn\n"
        "def train(loader):\n"
        "    model = nn.Linear(4, 2)\n"
        "    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "    for x, y in loader:\n"
        "        model(x).sum().backward()\n"
        "        xm.optimizer_step(opt)\n",
    ]
    good = [
        "import torch, torch_xla\nimport torch_xla.core.xla_model as xm\nfrom torch import nn\n"
        "def train(loader):\n"
        "    model = nn.Linear(4, 2).to(torch_xla.device())\n"
        "    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "    for x, y in loader:\n"
        "        model(x).sum().backward()\n"
        "        xm.optimizer_step(opt)\n",
        "import torch, torch_xla\nimport torch_xla.core.xla_model as xm\n"
        "def train(model, loader):  # the caller may have moved it\n"
        "    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "    for x, y in loader:\n"
        "        model(x).sum().backward()\n"
        "        xm.optimizer_step(opt)\n",
    ]

    def check(self, model):
        for node, ctx, _ in model.host_modules_trained():
            dev = model.device_name_at(ctx, node.lineno)
            dev = dev if dev is not None and len(dev) <= 12 else device_call(self.settings)
            text = node.id if type(node) is ast.Name else render(node)  # self.model (attributes.py)
            name = _short(text)
            call = f"{name}.to({dev})" if name == text else f".to({dev}) on it"
            yield self.finding(node, f"{name} is never moved to the XLA device", f"call {call} after building it")


@rule
class OptimizerBeforeToDevice(Rule):
    """## What it does
    In XLA code, flags an optimizer built over a module's parameters
    (`SGD(model.parameters())`, also in param groups, through names, comprehensions
    `[p for p in model.parameters() if ...]` and groups appended in a loop over
    `model.named_parameters()` before it) that the same
    function then moves to the XLA device (`model.to(torch_xla.device())`, `.to(device)`
    with `device` visibly the XLA device; also `.cuda()`, `.to("cuda")` and `.to(rank)`,
    which XLA401 / XLA402 turn into that move). Reported at the optimizer's constructor.

    ## Why is this bad?
    `Module.to()` keeps a parameter object only when the new tensor can share its
    implementation (`torch._has_compatible_shallow_copy_type`): CPU to CUDA can, CPU to XLA
    cannot, so every parameter of the module becomes a new `Parameter` on the device. The
    optimizer holds the old CPU ones: `optimizer.step()` updates tensors the model no
    longer uses, the model never trains and no error is raised (pytorch/xla#1623,
    pytorch/xla#6861; checked with torch_xla 2.9 on the CPU device: after the move
    `optimizer.param_groups[0]["params"][0] is model.weight` is False, the optimizer's
    parameter is still on `cpu`, and `optimizer.step()` leaves the model's weights as they
    were). The same script works on CUDA, which hides it in a port.

    ## Known problems
    Reported only for a module built on the host in the same function (or at module level;
    a constructor, or a call of a module function of this file whose every `return` builds
    one, `model = make_model()`) and neither moved nor handed to a call before the optimizer: a module that arrives as a
    parameter, or was moved already, may be on the device, and a second move is a no-op.
    In project mode the move may be another module's: a helper returning its argument moved,
    or a constructor whose `__init__` moves its module argument in place (`Engine(model)`
    doing `self.model = model.to(self.device)`), unless the optimizer is handed to that same
    call (`accelerator.prepare(model, optimizer)` may point it at the moved parameters).
    Not reported when the device cannot be seen (a parameter), when the module is bound
    again between the two (`model = other`), when the optimizer is built again after the
    move, when the move sits in another function, another loop, or a branch exclusive with
    the constructor, when more than 32 moves of that module come first, or for an XLA FSDP
    wrap after the optimizer (which also needs the optimizer built after it).

    ## Example
    ```python
    model = nn.Linear(10, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model.to(torch_xla.device())
    ```

    ## Use instead
    ```python
    model = nn.Linear(10, 2)
    model.to(torch_xla.device())
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    ```

    ## References
    - pytorch/xla#1623 ("Sending .to(device) after defining optimizer leads to subtle bug"), pytorch/xla#6861
    - PyTorch `torch/nn/modules/module.py` `Module._apply` (`Parameter(param_applied, ...)` when the
      shallow-copy types differ) and `Module.cuda` ("should be called before constructing the optimizer")
    - torch_xla `docs/source/learn/migration-to-xla-on-tpus.md` (model moved first, then "Create the optimizer")
    - Applies to every torch_xla release.
    """

    code = "XLA405"
    fix_applicability = "unsafe"
    name = "optimizer-before-to-device"
    message = "optimizer built before its module moves to the XLA device: it keeps the old parameters"
    fix = "build it after the move"
    severity = "E"
    versions = "2.0+"
    reported_at = "the optimizer's constructor (`torch.optim.SGD(...)`)"
    bad = [
        "import torch, torch_xla\nfrom torch import nn\n"
        "def setup():\n"
        "    model = nn.Linear(4, 2)\n"
        "    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "    model.to(torch_xla.device())\n"
        "    return model, opt\n",
    ]
    good = [
        "import torch, torch_xla\nfrom torch import nn\n"
        "def setup():\n"
        "    model = nn.Linear(4, 2)\n"
        "    model.to(torch_xla.device())\n"
        "    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "    return model, opt\n",
    ]

    def check(self, model):
        done = set()
        for call, _, move, _ in model.optimizers_before_moves():
            if type(move.func) is not ast.Attribute:  # Engine(model, opt): a project helper moving it
                name = ast_text(move.func)
                done.add(id(call))
                yield self.finding(call, f"optimizer built before {name[:24]}() on line {move.lineno} moves its module:"
                                         " it keeps the old parameters")
                continue
            receiver = move.func.value
            text = ast_text(receiver)
            moved = f"{text}.{move.func.attr}()" if len(text) <= 24 else f"its module's .{move.func.attr}()"
            done.add(id(call))
            yield self.finding(call, f"optimizer built before {moved} on line {move.lineno}: it keeps the old parameters")
        if model.project_callers is not None:
            for call, name, line in _moved_by_callers(model):
                if id(call) not in done:
                    yield self.finding(call, f"optimizer of {name[:20]} built before its caller (line {line}) moves it:"
                                             " it keeps the old parameters")


def _moved_by_callers(model):
    """Project mode: (constructor, parameter, caller's line) for an optimizer a function
    builds from the parameters of its own parameter p (build_optimizer(model, lr))
    when a caller in another module's XLA code hands it a module on the host and moves that
    module to the XLA device after the call (CallFacts.moved_after)."""
    names = model._constructor_names()
    quals = model.function_quals()
    for call, ctx in model.calls_to(*names) if names else ():
        func = ctx.func
        if func is None or func.ctx is None or func.ctx.func is not None or id(func) not in quals:
            continue
        params = func.params[1:] if func.cls is not None else func.params
        for mexpr, mctx in model.optimizer_modules(call, ctx) or ():
            if type(mexpr) is not ast.Name or mexpr.id not in params or mctx.func is not func:
                continue
            if model.moves(mexpr.id, mctx) and any(line < call.lineno for line, _, _ in model.moves(mexpr.id, mctx)):
                continue  # moved here first
            try:
                callers = model.project_callers(quals[id(func)], partial=True, xla_only=True) or ()
            except (Exception, RecursionError):  # the project cannot be read: unknown
                callers = ()
            index = params.index(mexpr.id)
            hit = next((c.line for c in callers if index in getattr(c, "moved_after", ())), None)
            if hit is not None:
                yield call, mexpr.id, hit
                break


def ast_text(expr) -> str:
    parts = []
    while hasattr(expr, "attr"):
        parts.append(expr.attr)
        expr = expr.value
    parts.append(getattr(expr, "id", "model"))
    return ".".join(reversed(parts))
