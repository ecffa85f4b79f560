"""XLA908-XLA911: the newer APIs (issue 29, milestone 5): FSDPv2's output sharding, the
wrapper ``mark_sharding`` returns, and the loop operators' closures.

Each premise was checked against the torch_xla 2.9 source and on its CPU client; the rule
docstrings say where the source disagrees with the issue's wording.
"""

from __future__ import annotations

import ast

from .. import api_table
from ..model import UNKNOWN
from ..model.runtime import MOVE_METHODS, SPMD_PACKAGES, dotted
from ..model.tensors import TORCH_FACTORIES
from ..registry import Rule, rule

FSDPV2_MODULE = "torch_xla.experimental.spmd_fully_sharded_data_parallel"
FSDPV2 = FSDPV2_MODULE + ".SpmdFullyShardedDataParallel"
#: transformers' output classes: ``ModelOutput`` subclasses ``OrderedDict``, not ``tuple``
_MODEL_OUTPUT_PREFIXES = ("transformers.modeling_outputs.", "transformers.utils.ModelOutput",
                          "transformers.file_utils.ModelOutput", "transformers.utils.generic.ModelOutput")
_DATACLASS = ("dataclasses.dataclass",)
_NO_GRAD = frozenset({"torch.no_grad", "torch.inference_mode", "torch.autograd.grad_mode.no_grad",
                      "torch.autograd.no_grad"})


def _present(settings, module: str) -> bool:
    """The target release ships ``module`` (the generated module table)."""
    return settings.version_text in api_table.module_presence().get(module, frozenset())


# -- XLA908 ----------------------------------------------------------------------------------

@rule
class Fsdpv2OutputUnsharded(Rule):
    """## What it does
    Flags `SpmdFullyShardedDataParallel(model, mesh=...)` (FSDPv2) given no `shard_output=`
    where the wrapped model's class, defined in the module, has a `forward` whose every
    `return` gives a dict, a list, a `transformers` model output (`CausalLMOutput(...)`, a
    `ModelOutput` subclass), a `@dataclass` object, or a tuple whose first item is no
    tensor (`return None, loss`); also a `transformers` model loaded with
    `from_pretrained` / `from_config` (it returns a `ModelOutput` unless told
    `return_dict=False`).

    ## Why is this bad?
    FSDPv2 marks the sharding of the forward's output to make the compiler run the FSDP
    algorithm. Without `shard_output=` it does so itself for a tensor, or for a tuple whose
    first item is a tensor (only that item, with a warning); any other output raises
    `RuntimeError: The output type is not supported: <class 'dict'>. Please provide your own
    shard_output callable.` at the first forward.

    ## Known problems
    The issue's wording (a forward that returns a tuple) is narrower in torch_xla 2.2-2.9:
    a tuple whose first item is a tensor works with the default (a `UserWarning`, the first
    item sharded), so it is not reported. A forward with any `return` that may give a tensor
    or an unknown value, a model built by a helper or imported class, and a call given
    `**kwargs` are not reported. Layers wrapped by `auto_wrap_policy` get the same default
    and are not followed.

    ## Example
    ```python
    class Net(nn.Module):
        def forward(self, x):
            h = self.body(x)
            return {"logits": h, "loss": h.sum()}

    model = FSDPv2(Net(), mesh=mesh)
    ```

    ## Use instead
    ```python
    def shard_output(output, mesh):
        xs.mark_sharding(output["logits"], mesh, ("fsdp", None))

    model = FSDPv2(Net(), mesh=mesh, shard_output=shard_output)
    ```
    Or return one tensor from `forward`.

    ## References
    - torch_xla `torch_xla/experimental/spmd_fully_sharded_data_parallel.py` (`shard_output_impl`,
      the `RuntimeError` and the tuple warning, 2.2-2.9; `mesh=` and `shard_output=` are
      keyword-only from 2.4)
    - torch_xla `docs/source/perf/fsdp_spmd.md` "Sharding output"; pytorch/xla#6379 (the
      FSDPv2 RFC: a tensor, a tuple's first tensor, else an error)
    - Applies to torch_xla 2.2-2.9 (the module exists from 2.2).
    """

    code = "XLA908"
    name = "fsdpv2-tuple-output-unsharded"
    message = "Net.forward returns a dict: FSDPv2 raises without shard_output="
    fix = "pass shard_output=fn(output, mesh)"
    severity = "E"
    versions = "2.2+"
    reported_at = "the `SpmdFullyShardedDataParallel(...)` call"
    bad = ["import torch\n"
           "from torch_xla.experimental.spmd_fully_sharded_data_parallel import SpmdFullyShardedDataParallel as FSDPv2\n"
           "class Net(torch.nn.Module):\n    def forward(self, x):\n        return {'logits': x}\n"
           "def build(mesh):\n    return FSDPv2(Net(), mesh=mesh)\n"]
    good = ["import torch\n"
            "from torch_xla.experimental.spmd_fully_sharded_data_parallel import SpmdFullyShardedDataParallel as FSDPv2\n"
            "class Net(torch.nn.Module):\n    def forward(self, x):\n        return x, x.sum()\n"
            "def build(mesh):\n    return FSDPv2(Net(), mesh=mesh)\n"]

    def check(self, model):
        if not _present(self.settings, FSDPV2_MODULE):
            return
        for call, ctx in model.calls_to(FSDPV2):
            if not model.in_xla_code(ctx) or model.kwarg(call, "shard_output", 2) is not None:
                continue  # given (or a splat may give it)
            wrapped = model.kwarg(call, "module", 0)
            if not isinstance(wrapped, ast.AST):
                continue
            found = self._output_kind(model, wrapped, ctx, 0)
            if found is not None:
                what, name = found
                yield self.finding(call, f"{name}.forward returns {what}: FSDPv2 raises without shard_output=")

    def _output_kind(self, model, expr, ctx, depth):
        """``(what it returns, the class name)`` when the module ``expr`` holds visibly
        returns no tensor (nor a tuple starting with one) from its forward; else None."""
        if depth > 6:
            return None
        t = type(expr)
        if t is ast.Name:
            values = model.values(expr, ctx)
            if not values or len(values) != 1:
                return None
            value, vctx = values[0]
            return self._output_kind(model, value, vctx, depth + 1) if vctx is not None else None
        if t is not ast.Call:
            return None
        f = expr.func
        if type(f) is ast.Attribute and f.attr in MOVE_METHODS | {"train", "float", "bfloat16", "half"} \
                and model.call_name(expr, ctx) is None:
            return self._output_kind(model, f.value, ctx, depth + 1)
        if type(f) is ast.Attribute and f.attr in ("from_pretrained", "from_config"):
            q = model.qualname(f.value, ctx)
            if q is not None and q.startswith("transformers.") and not any(
                    k.arg in ("return_dict", None) for k in expr.keywords):
                return "a ModelOutput", q.rsplit(".", 1)[-1]
            return None
        cls = model.constructed_class(expr, ctx)
        if cls is None:
            return None
        key = ("xla908_forward", id(cls))
        if key not in model._cache:
            model._cache[key] = self._forward_kind(model, cls)
        return model._cache[key]

    def _forward_kind(self, model, cls):
        """What every ``return`` of the class's ``forward`` (its own or inherited) gives, when
        FSDPv2's default cannot shard it; None when some return may be a tensor or unknown."""
        forward = next((c.methods["forward"] for c in model.mro(cls) if "forward" in c.methods), None)
        if forward is None or not forward.returns:
            return None
        kinds = set()
        for value, rctx in forward.returns:
            kind = self._returned(model, value, rctx, 0)
            if kind is None:
                return None
            kinds.add(kind)
        return (kinds.pop() if len(kinds) == 1 else "no tensor"), cls.name

    def _returned(self, model, value, ctx, depth):
        """What a returned expression visibly is, when FSDPv2's default cannot shard it:
        ``"a dict"``, ``"a list"``, ``"a ModelOutput"``, ``"a dataclass"``, ``"a tuple ..."``;
        None when it may be a tensor or a tuple starting with one, or is unknown."""
        if depth > 4 or value is None or value is UNKNOWN:
            return None
        t = type(value)
        if t in (ast.Dict, ast.DictComp):
            return "a dict"
        if t in (ast.List, ast.ListComp):
            return "a list"
        if t is ast.Tuple:
            if not value.elts:
                return None
            first = value.elts[0]
            if type(first) is ast.Constant or type(first) in (ast.Dict, ast.List, ast.Tuple, ast.DictComp):
                return "a tuple led by no tensor"
            return None
        if t is ast.Name:
            single = model.single_value(value, ctx)
            if single is None:
                return None
            return self._returned(model, *single, depth + 1)
        if t is ast.Call:
            f = value.func
            if type(f) is ast.Name and f.id == "dict" and model.lookup("dict", ctx, value.lineno) is None:
                return "a dict"
            q = model.call_name(value, ctx)
            if q is not None and q.startswith(_MODEL_OUTPUT_PREFIXES):
                return "a ModelOutput"
            if type(f) is ast.Name:
                cls = model.class_named(f.id, ctx)
                if cls is not None:
                    return self._output_class(model, cls)
        return None

    @staticmethod
    def _output_class(model, cls):
        """A class of the module that is a ``ModelOutput`` or a ``@dataclass`` that is no tuple."""
        for c in model.mro(cls):
            for base in c.node.bases:
                q = model.qualname(base, c.ctx)
                if q is not None and q.startswith(_MODEL_OUTPUT_PREFIXES):
                    return "a ModelOutput"
                if q in ("typing.NamedTuple", "tuple") or (type(base) is ast.Name and base.id == "tuple"):
                    return None
        for deco in cls.node.decorator_list:
            target = deco.func if type(deco) is ast.Call else deco
            if model.qualname(target, cls.ctx) in _DATACLASS:
                return "a dataclass"
        return None


# -- XLA909 ----------------------------------------------------------------------------------

#: attributes of the wrapper that read its sharding, not compute with it
_WRAPPER_API = frozenset({"sharding_spec", "sharding_type", "local_shards", "load_local_shards_", "global_tensor",
                          "mesh_shape", "partition_spec", "placements", "redistribute", "invalidate_spec_cache"})
_INERT_CALLS = frozenset({"print", "isinstance", "type", "id", "repr", "str"})


@rule
class MarkShardingResultRebound(Rule):
    """## What it does
    Flags the result of `xs.mark_sharding(x, mesh, spec)` rebound to the tensor's own name
    (`x = xs.mark_sharding(x, mesh, spec)`, `self.h = xs.mark_sharding(self.h, ...)`) or
    used as an operand or an argument (`model(xs.mark_sharding(x, ...))`,
    `xs.mark_sharding(h, ...) @ w`), outside `torch.no_grad()` / `torch.inference_mode()`.

    ## Why is this bad?
    `mark_sharding` annotates its tensor in place and returns an `XLAShardedTensor`
    wrapper that never requires grad (`requires_grad=False` in every release). Rebinding a
    parameter to it loses the parameter's gradient; computing with it sends every op
    through the wrapper's `__torch_dispatch__`, and on torch_xla 2.9 a `backward()` through
    it fails (`RuntimeError: ... INTERNAL ASSERT FAILED ... FunctionalTensorWrapper.cpp`).
    The annotated tensor itself is already sharded: keep using it.

    ## Known problems
    The torch_xla docs' FSDPv2 page writes `x = xs.mark_sharding(x, mesh, ('fsdp', None))`
    (docs/source/perf/fsdp_spmd.md): on 2.9 that program fails at `loss.backward()`. A
    result assigned to another name (`xst = xs.mark_sharding(t, ...)`, to read
    `xst.sharding_spec` or `xst.local_shards`), returned, or read only through the
    wrapper's own attributes is not reported, nor a result rebound to the tensor's name when
    the function reads the wrapper's attributes through that name (`xt = xs.mark_sharding(xt,
    ...)` and then `xt.local_shards`, as torch_xla's own tests do); nor is
    `mark_sharding_with_gradients`, whose result is meant to be used.

    ## Example
    ```python
    h = self.fc1(x)
    h = xs.mark_sharding(h, mesh, ("data", None))
    return self.fc2(h)
    ```

    ## Use instead
    ```python
    h = self.fc1(x)
    xs.mark_sharding(h, mesh, ("data", None))
    return self.fc2(h)
    ```

    ## References
    - torch_xla `torch_xla/distributed/spmd/xla_sharding.py` `mark_sharding` (returns
      `wrap_as_sharded_tensor(t, ...)`); `xla_sharded_tensor.py` `XLAShardedTensor.__new__`
      (`requires_grad=kwargs.get("requires_grad", False)`, 2.0-2.9)
    - pytorch/xla#3755, #4144 (the annotation is in place; the returned wrapper is optional)
    - Applies to torch_xla 2.0-2.9 (`torch_xla.experimental.xla_sharding` until 2.4,
      `torch_xla.distributed.spmd` from 2.2).
    """

    code = "XLA909"
    name = "mark-sharding-result-rebound"
    message = "x = xs.mark_sharding(x, ...) makes x a wrapper without grad"
    fix = "call xs.mark_sharding(x, ...) alone"
    severity = "E"
    versions = "2.0+"
    fix_applicability = "unsafe"
    reported_at = "the `xs.mark_sharding(...)` call"
    bad = ["import torch_xla.distributed.spmd as xs\n"
           "def forward(h, mesh, fc):\n    h = xs.mark_sharding(h, mesh, ('data', None))\n    return fc(h)\n"]
    good = ["import torch_xla.distributed.spmd as xs\n"
            "def forward(h, mesh, fc):\n    xs.mark_sharding(h, mesh, ('data', None))\n    return fc(h)\n"]

    def check(self, model):
        marks = [q for q in model.call_index() if q.startswith(SPMD_PACKAGES) and q.endswith(".mark_sharding")]
        calls = [(c, x) for c, x in model.calls_to(*marks) if model.in_xla_code(x)] if marks else []
        if not calls:
            return
        parents, no_grad = self._parents(model, calls)
        for call, ctx in calls:
            if id(call) in no_grad:
                continue
            parent = parents.get(id(call))
            t = model.kwarg(call, "t", 0)
            shown = model.call_name(call, ctx).rsplit(".", 2)
            shown = "xs.mark_sharding" if shown[-2] in ("spmd", "xla_sharding") else "mark_sharding"
            if type(parent) in (ast.Assign, ast.AnnAssign) and isinstance(t, ast.AST):
                targets = parent.targets if type(parent) is ast.Assign else [parent.target]
                root = _root_text(t)
                if root is not None and len(targets) == 1 and dotted(targets[0]) == root \
                        and root not in _wrapper_reads(model, ctx.func):
                    yield self.finding(call, f"{root} = {shown}({root}, ...) makes {root} a wrapper without grad",
                                       f"call {shown}({root}, ...) alone")
            elif self._computes(model, parent, call, ctx):
                yield self.finding(call, f"computing with the wrapper {shown} returns fails in backward",
                                   "use the tensor itself")

    @staticmethod
    def _computes(model, parent, call, ctx) -> bool:
        t = type(parent)
        if t in (ast.BinOp, ast.UnaryOp, ast.Compare):
            return True
        if t is ast.Attribute:
            return parent.attr not in _WRAPPER_API
        if t is ast.keyword:
            return True
        if t is ast.Call and parent.func is not call:
            f = parent.func
            return not (type(f) is ast.Name and f.id in _INERT_CALLS and model.lookup(f.id, ctx, call.lineno) is None)
        return False

    @staticmethod
    def _parents(model, calls):
        """``id(call) -> parent node`` for the given calls, and the ids of those under a
        ``with torch.no_grad():`` / ``inference_mode()`` block or in a function decorated
        with one: one walk of the module (parents of keywords' values are their call)."""
        key = "xla909_parents"
        cached = model._cache.get(key)
        if cached is not None:
            return cached
        wanted = {id(c): x for c, x in calls}
        parents, no_grad = {}, set()
        stack = [(model.tree, False)]
        while stack:
            node, quiet = stack.pop()
            t = type(node)
            if t in (ast.With, ast.AsyncWith, ast.FunctionDef, ast.AsyncFunctionDef):
                quiet = quiet or _disables_grad(model, node, wanted)
            for child in ast.iter_child_nodes(node):
                if type(child) is ast.keyword and type(child.value) is ast.Call and id(child.value) in wanted:
                    parents[id(child.value)] = child
                    if quiet:
                        no_grad.add(id(child.value))
                    continue
                if id(child) in wanted:
                    parents[id(child)] = node
                    if quiet:
                        no_grad.add(id(child))
                stack.append((child, quiet))
        result = (parents, no_grad)
        model._cache[key] = result
        return result


def _wrapper_reads(model, func) -> frozenset:
    """The names (dotted: ``xt``, ``self.h``) whose wrapper attributes (``xt.local_shards``,
    ``xt.global_tensor``, :data:`_WRAPPER_API`) the function (or the module level, for
    ``None``) reads: a name rebound to the wrapper to use it as one (torch_xla's own tests
    read its shards). One walk per function, memoised."""
    key = ("xla909_wrapper_reads", id(func))
    found = model._cache.get(key)
    if found is None:
        root = func.node if func is not None else model.tree
        found = model._cache[key] = frozenset(
            d for n in ast.walk(root) if type(n) is ast.Attribute and n.attr in _WRAPPER_API
            for d in (dotted(n.value),) if d is not None)
    return found


def _disables_grad(model, node, wanted) -> bool:
    """A ``with`` whose item, or a function whose decorator, is ``torch.no_grad`` /
    ``torch.inference_mode`` (called or not). Names resolve from any wanted call's scope."""
    exprs = [i.context_expr for i in node.items] if type(node) in (ast.With, ast.AsyncWith) else node.decorator_list
    scopes = list(wanted.values())[:4]  # a few scopes to resolve from: linear in the module
    for e in exprs:
        target = e.func if type(e) is ast.Call else e
        for ctx in scopes:
            q = model.qualname(target, ctx)
            if q is not None:
                if q in _NO_GRAD:
                    return True
                break
    return False


def _root_text(expr) -> str | None:
    """``x`` for ``x``, ``x.to(dev)``, ``x.view(...)``; ``self.h`` for ``self.h``."""
    for _ in range(8):
        t = type(expr)
        if t in (ast.Name, ast.Attribute):
            return dotted(expr)
        if t is ast.Call and type(expr.func) is ast.Attribute:
            expr = expr.func.value
        else:
            return None
    return None


# -- XLA910 ----------------------------------------------------------------------------------

_DEVICE_LOADERS = ("torch_xla.distributed.parallel_loader.MpDeviceLoader",
                   "torch_xla.distributed.parallel_loader.ParallelLoader")
_DATA_LOADERS = ("torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader")
#: torch factories whose positional arguments (or one tuple) are the shape
_SHAPED = frozenset("torch." + n for n in ("zeros", "ones", "empty", "randn", "rand"))
_SCALAR_TENSORS = frozenset({"torch.tensor", "torch.as_tensor"})
#: tensor methods that keep the rank
_SAME_RANK = frozenset({"float", "long", "int", "half", "bfloat16", "double", "bool", "to", "clone", "detach",
                        "contiguous"})


@rule
class InputShardingSingleSpecDict(Rule):
    """## What it does
    Flags `pl.MpDeviceLoader(loader, device, input_sharding=xs.ShardingSpec(mesh, spec))`
    (also `ParallelLoader`) with one spec, over a `DataLoader` whose dataset is a class of
    the module whose `__getitem__` returns a dict, when some value of that dict is batched
    to a rank other than the spec's length (`torch.tensor(label)`, rank 1 once batched,
    beside a spec for `(batch, sequence)`). A hint, reported at the loader call.

    ## Why is this bad?
    One `ShardingSpec` applies only to the tensors whose rank equals its partition spec's
    length (`ShardingSpec.can_apply`); every other tensor of the batch is sent to every
    device whole, silently: no error, the labels or the images are replicated instead of
    split over the data axis (seen on 2.9: `{replicated}`). From torch_xla 2.5
    `input_sharding` takes a dict, one spec per key of the batch.

    ## Known problems
    A hint: a replicated small tensor (a label per sample) costs little. Ranks are read
    only where they show: a number (`int(...)`), `torch.tensor` of one, a list display, a shaped factory
    (`torch.zeros(3, 224, 224)`, `torch.randint(0, v, (n, d))`), through names and `self.`
    attributes, and a row of a table (`self.ids[i]` with `i` the sample index: one rank
    less than `self.ids`); a row picked by any other index is unknown; a loader given `collate_fn=` or `batch_size=None`, a
    dataset from a helper or a library, and a spec held in something other than a name are
    not reported. Reported for targets 2.5 and later (the dict form's release). A
    partition spec shorter than the mesh (`("data",)` on a 2-D mesh) failed on 2.9 with
    `IndexError` inside a dict of specs: give each key a spec as long as its tensor's rank,
    over a mesh whose axes the spec names.

    ## Example
    ```python
    class Pairs(Dataset):
        def __getitem__(self, i):
            return {"input_ids": self.ids[i], "label": torch.tensor(int(self.labels[i]))}

    loader = pl.MpDeviceLoader(DataLoader(Pairs(), batch_size=8), device,
                               input_sharding=xs.ShardingSpec(mesh, ("data", None)))
    ```

    ## Use instead
    ```python
    loader = pl.MpDeviceLoader(DataLoader(Pairs(), batch_size=8), device, input_sharding={
        "input_ids": xs.ShardingSpec(mesh, ("data", None)),
        "label": xs.ShardingSpec(mesh, ("data",))})
    ```

    ## References
    - torch_xla `torch_xla/distributed/parallel_loader.py` `ParallelLoader.send_cpu_data_to_device`
      (the dict of specs, 2.5-2.9); `torch_xla/core/xla_model.py` `send_cpu_data_to_device`
      (`input_sharding.xla_spec(t)`, None for another rank)
    - torch_xla `torch_xla/distributed/spmd/xla_sharding.py` `ShardingSpec.can_apply`
      (`len(t.shape) == len(self.partition_spec)`)
    - Applies to torch_xla 2.5-2.9 (the dict form from 2.5).
    """

    code = "XLA910"
    name = "input-sharding-single-spec-dict"
    message = "input_sharding's one spec fits rank-2 tensors: label (rank 1) is replicated"
    fix = "pass input_sharding={key: ShardingSpec(...)}"
    severity = "W"
    versions = "2.5+"
    hint = True
    reported_at = "the `MpDeviceLoader(...)` call"
    bad = ["import torch\nimport torch_xla.distributed.parallel_loader as pl\nimport torch_xla.distributed.spmd as xs\n"
           "from torch.utils.data import DataLoader, Dataset\n"
           "class Pairs(Dataset):\n    def __getitem__(self, i):\n"
           "        return {'ids': torch.zeros(16), 'label': torch.tensor(int(self.labels[i]))}\n"
           "def make(mesh, device):\n    return pl.MpDeviceLoader(DataLoader(Pairs(), batch_size=8), device,\n"
           "                             input_sharding=xs.ShardingSpec(mesh, ('data', None)))\n"]
    good = ["import torch\nimport torch_xla.distributed.parallel_loader as pl\nimport torch_xla.distributed.spmd as xs\n"
            "from torch.utils.data import DataLoader, Dataset\n"
            "class Pairs(Dataset):\n    def __getitem__(self, i):\n"
            "        return {'ids': torch.zeros(16), 'label': torch.tensor(int(self.labels[i]))}\n"
            "def make(mesh, device):\n    return pl.MpDeviceLoader(DataLoader(Pairs(), batch_size=8), device,\n"
            "                             input_sharding={'ids': xs.ShardingSpec(mesh, ('data', None)),\n"
            "                                             'label': xs.ShardingSpec(mesh, ('data',))})\n"]

    def check(self, model):
        if self.settings.target_version < (2, 5):
            return
        for call, ctx in model.calls_to(*_DEVICE_LOADERS):
            sharding = model.kwarg(call, "input_sharding")
            if not isinstance(sharding, ast.AST) or not model.in_xla_code(ctx):
                continue
            length = self._spec_length(model, sharding, ctx, 0)
            items = self._batch_ranks(model, model.kwarg(call, "loader", 0), ctx, 0) if length is not None else None
            if not items:
                continue
            other = next(((key, rank) for key, rank in items if rank != length), None)
            if other is not None:
                key, rank = other
                yield self.finding(call, f"input_sharding's one spec fits rank-{length} tensors: {key} (rank {rank}) "
                                         "is replicated")

    def _spec_length(self, model, expr, ctx, depth):
        """The partition spec's length of the one ``ShardingSpec(mesh, spec)`` ``expr`` holds."""
        if depth > 4 or not isinstance(expr, ast.AST):
            return None
        if type(expr) is ast.Name:
            single = model.single_value(expr, ctx)
            if single is None:
                return None
            return self._spec_length(model, *single, depth + 1)
        if type(expr) is not ast.Call:
            return None
        q = model.call_name(expr, ctx)
        if q is None or not q.startswith(SPMD_PACKAGES) or not q.endswith(".ShardingSpec"):
            return None
        spec = model.kwarg(expr, "partition_spec", 1)
        for _ in range(4):
            if type(spec) is ast.Name:
                values = model.values(spec, ctx)
                spec = values[0][0] if values and len(values) == 1 else None
        if type(spec) in (ast.Tuple, ast.List) and not any(type(e) is ast.Starred for e in spec.elts):
            return len(spec.elts)
        return None

    def _batch_ranks(self, model, expr, ctx, depth):
        """``[(key, rank once batched)]`` for the dict ``__getitem__`` returns, of the dataset
        of the ``DataLoader`` ``expr`` holds (keys whose rank shows); None when unknown."""
        if depth > 4 or not isinstance(expr, ast.AST):
            return None
        if type(expr) is ast.Name:
            single = model.single_value(expr, ctx)
            if single is None:
                return None
            return self._batch_ranks(model, *single, depth + 1)
        if type(expr) is not ast.Call or model.call_name(expr, ctx) not in _DATA_LOADERS:
            return None
        batch = model.kwarg(expr, "batch_size", 1)
        if model.kwarg(expr, "collate_fn", 6) is not None or batch is UNKNOWN \
                or (type(batch) is ast.Constant and batch.value is None):
            return None
        dataset = model.kwarg(expr, "dataset", 0)
        for _ in range(4):
            if type(dataset) is ast.Name:
                single = model.single_value(dataset, ctx)
                if single is None:
                    return None
                dataset, ctx = single
        if type(dataset) is not ast.Call or type(dataset.func) is not ast.Name:
            return None
        cls = model.class_named(dataset.func.id, ctx)
        getitem = next((c.methods["__getitem__"] for c in model.mro(cls) if "__getitem__" in c.methods), None) \
            if cls is not None else None
        if getitem is None or len(getitem.returns) != 1:
            return None
        value, vctx = getitem.returns[0]
        if type(value) is not ast.Dict or None in value.keys:
            return None
        out = []
        for key, item in zip(value.keys, value.values):
            rank = _item_rank(model, item, vctx, 0)
            if type(key) is ast.Constant and isinstance(key.value, str) and rank is not None:
                out.append((key.value, rank + 1))
        return out


def _item_rank(model, expr, ctx, depth) -> int | None:
    """The rank of one sample's value where it shows: a number 0, ``torch.tensor(n)`` 0,
    ``torch.tensor([...])`` 1, ``torch.zeros(3, 4, 4)`` / ``torch.ones(n, d)`` (one
    dimension per positional argument) 3 / 2, ``torch.randint(0, v, (n, d))`` 2, through
    names and ``self.`` attributes (``self.ids = torch.randint(...)`` in ``__init__``), and
    one sample of a table (``self.ids[i]``: one rank less, for an int index or the index
    parameter of ``__getitem__``); None when unknown."""
    if depth > 6 or expr is None:
        return None
    t = type(expr)
    if t is ast.Constant:
        return 0 if isinstance(expr.value, (int, float)) and not isinstance(expr.value, bool) else None
    if t in (ast.Name, ast.Attribute):
        single = model.single_value(expr, ctx)
        if single is None:
            return None
        return _item_rank(model, *single, depth + 1)
    if t is ast.Subscript:
        index = expr.slice
        if type(index) is ast.Slice:
            return _item_rank(model, expr.value, ctx, depth + 1)  # a slice keeps the rank
        rank = _item_rank(model, expr.value, ctx, depth + 1) if _int_index(model, index, ctx) else None
        return rank - 1 if rank else None
    if t is not ast.Call:
        return None
    f = expr.func
    if type(f) is ast.Attribute and f.attr in _SAME_RANK \
            and type(f.value) in (ast.Call, ast.Name, ast.Attribute, ast.Subscript):
        return _item_rank(model, f.value, ctx, depth + 1)
    q = model.call_name(expr, ctx)
    if q is None:
        if type(f) is ast.Name and f.id in ("int", "float", "len") and model.lookup(f.id, ctx, expr.lineno) is None:
            return 0
        return None
    if q in _SCALAR_TENSORS and expr.args:
        data = expr.args[0]
        rank = 0
        while type(data) in (ast.List, ast.Tuple):
            rank += 1
            if not data.elts:
                return rank  # torch.tensor([]) has shape (0,)
            data = data.elts[0]
        if type(data) is ast.Constant or rank:
            return rank
        return _item_rank(model, data, ctx, depth + 1)
    if q in _SHAPED or q == _RANDINT:
        size = model.kwarg(expr, "size")
        args = expr.args
        if q == _RANDINT:  # randint(high, size) / randint(low, high, size)
            args = [] if size is not None else args[-1:] if len(args) in (2, 3) else None
        if size is None and args and len(args) == 1:
            size = args[0]
        if isinstance(size, ast.AST) and type(size) in (ast.Tuple, ast.List):
            return len(size.elts) if not any(type(e) is ast.Starred for e in size.elts) else None
        if size is None and args and (len(args) > 1 or type(args[0]) is ast.Constant) and all(
                type(a) in (ast.Constant, ast.Name, ast.Attribute, ast.BinOp) for a in args) \
                and all(type(a.value) is int for a in args if type(a) is ast.Constant):
            return len(args)  # torch.ones(n, seq_len): one dimension per argument
    return None


#: ``torch.randint``: the size is its last positional argument
_RANDINT = "torch.randint"


def _int_index(model, index, ctx) -> bool:
    """``index`` picks one element of a dimension: an int literal, ``int(...)``, or the index
    parameter of a ``__getitem__`` (a map-style dataset's sample index)."""
    if type(index) is ast.Constant:
        return type(index.value) is int
    if type(index) is ast.Call and type(index.func) is ast.Name and index.func.id == "int":
        return model.lookup("int", ctx, index.lineno) is None
    if type(index) is ast.Name:
        bindings = model.lookup(index.id, ctx, index.lineno)
        if bindings and len(bindings) == 1 and bindings[0][1] == "param":
            func = bindings[0][2]
            params = getattr(func, "params", None) or ()
            return getattr(func, "name", None) == "__getitem__" and len(params) >= 2 and params[1] == index.id
    return False


# -- XLA911 ----------------------------------------------------------------------------------

SCAN_MODULE = "torch_xla.experimental.scan"
SCAN = SCAN_MODULE + ".scan"


@rule
class LoopOpBodyCapturesTensor(Rule):
    """## What it does
    Flags the function given to `torch_xla.experimental.scan.scan(fn, init, xs)` when it
    reads a tensor it is not passed: a name of an enclosing scope bound to a tensor
    (`torch.zeros(...)`, `x.to(device)`, an `nn.Parameter`) or to a layer
    (`nn.Linear(...)`, a module class of the file) or to a `self.` attribute holding one
    (`w_x, w_h = self.w_x, self.w_h` in `forward`), or a `self.` attribute of the
    enclosing method that holds one; also a method passed bound (`scan(self.step, ...)`)
    reading such a `self.` attribute.

    ## Why is this bad?
    `scan` traces `fn` with AOTAutograd over fake tensors: a real device tensor read from
    outside (a layer's weights too) fails the trace (`AssertionError: Please convert all
    Tensors to FakeTensors first ...`), before anything runs. Carried in the operands
    (`scan(fn, (h, w), xs)`), the tensor is an input of the traced function like the
    others, and gets its gradient.

    ## Known problems
    The issue's wording also names `while_loop` and `fori_loop`. On torch_xla 2.9 the
    `torch._higher_order_ops.while_loop` operator lifts what its functions capture
    (Dynamo adds them as additional inputs): a body reading a captured tensor gives the
    right result, so it is not reported. `fori_loop` ran a body reading a captured tensor
    correctly once, then failed on the same call repeated (a shape mismatch of its `While`
    parameters), and failed with the tensor carried too (`TypeError` in
    `buildforiloop()`): its tests are skipped upstream ("not supported now due to unstable
    result"), so a capture is not what breaks it and it is not reported. A captured
    parameter of the enclosing function, or any value whose binding cannot be seen, is
    unknown and not reported. For a stack of layers, `scan_layers(layers, x)` passes their
    weights itself.

    ## Example
    ```python
    proj = nn.Linear(16, 16).to(device)

    def step(h, x):
        h = proj(h) + x
        return h, h

    final, ys = scan(step, init, xs)
    ```

    ## Use instead
    ```python
    w = proj.weight

    def step(carry, x):
        h, w = carry
        h = h @ w.T + x
        return (h, w), h

    (final, _), ys = scan(step, (init, w), xs)
    ```

    ## References
    - torch_xla `torch_xla/experimental/scan.py` (`value_and_grad_partitioned`: `aot_function`
      over fake carries and slices, 2.5-2.9); `docs/source/features/scan.md` (AOTAutograd
      traceable functions; `scan_layers`)
    - torch_xla `test/test_while_loop.py` (a `while_loop` body calling `self.linear`: lifted;
      the `fori_loop` test skipped); `torch_xla/experimental/fori_loop.py`
    - Applies to torch_xla 2.5-2.9 (`torch_xla.experimental.scan` from 2.5).
    """

    code = "XLA911"
    name = "loop-op-body-captures-tensor"
    message = "scan's function reads w, a tensor it is not passed (AssertionError)"
    fix = "carry it in the operands"
    severity = "E"
    versions = "2.5+"
    reported_at = "the `scan(...)` call"
    bad = ["import torch\nimport torch_xla\nfrom torch_xla.experimental.scan import scan\n"
           "def run(init, xs):\n    w = torch.ones(4, device=torch_xla.device())\n"
           "    def fn(h, x):\n        h = h * w + x\n        return h, h\n"
           "    return scan(fn, init, xs)\n"]
    good = ["import torch\nimport torch_xla\nfrom torch_xla.experimental.scan import scan\n"
            "def run(init, xs):\n    w = torch.ones(4, device=torch_xla.device())\n"
            "    def fn(c, x):\n        h, w = c\n        h = h * w + x\n        return (h, w), h\n"
            "    return scan(fn, (init, w), xs)\n"]

    def check(self, model):
        if not _present(self.settings, SCAN_MODULE):
            return
        for call, ctx in model.calls_to(SCAN):
            fn = model.kwarg(call, "fn", 0)
            if not model.in_xla_code(ctx) or not isinstance(fn, ast.AST):
                continue
            captured = self._captured(model, fn, ctx, call)
            if captured is not None:
                yield self.finding(call, f"scan's function reads {captured}, a tensor it is not passed "
                                         "(AssertionError)")

    def _captured(self, model, fn, ctx, call) -> str | None:
        """The first name (or ``self.attr``) the loop function reads from outside that
        visibly holds a tensor or a layer (every binding of the name in its scope does);
        None when none is seen. The function is a lambda, a function of the module (nested
        or not), or a method of the enclosing class passed bound (``scan(self.step, ...)``).
        Memoised per function: linear in the module."""
        holder = None  # (class, the name its instance has in the function)
        if type(fn) is ast.Lambda:
            node, defined_in, own = fn, ctx, {a.arg for a in _all_args(fn.args)}
        elif type(fn) in (ast.Name, ast.Attribute):
            funcs = model.function_of(fn, ctx)
            if len(funcs) != 1 or funcs[0].ctx is None:
                return None
            func = funcs[0]
            node, defined_in = func.node, func.ctx
            own = {a.arg for a in _all_args(node.args)} | _stored_names(node)
            if func.cls is not None:  # a bound method: its first parameter is the instance
                outer = ctx.func
                if type(fn) is not ast.Attribute or type(fn.value) is not ast.Name or not func.params \
                        or outer is None or outer.cls is None or not outer.params or fn.value.id != outer.params[0]:
                    return None
                holder = (func.cls, func.params[0])
                own.discard(func.params[0])
        else:
            return None
        if holder is None:
            outer = defined_in.func
            if outer is not None and outer.cls is not None and outer.params and outer.params[0] not in own:
                holder = (outer.cls, outer.params[0])
        key = ("xla911_captured", id(node))
        if key not in model._cache:
            model._cache[key] = self._reads_outside(model, node, defined_in, own, holder)
        return model._cache[key]

    def _reads_outside(self, model, node, defined_in, own, holder) -> str | None:
        body = [node.body] if type(node) is ast.Lambda else node.body
        seen: set[str] = set()
        for stmt in body:
            for n in ast.walk(stmt):
                if type(n) is ast.Attribute and type(n.value) is ast.Name and type(n.ctx) is ast.Load \
                        and holder is not None and n.value.id == holder[1]:
                    text = f"{n.value.id}.{n.attr}"
                    if text not in seen:
                        seen.add(text)
                        values = model.self_attr_values(holder[0], n.attr)
                        if values and all(c is not None and self._tensor_value(model, v, c, 0) for v, c in values):
                            return text
                if type(n) is not ast.Name or type(n.ctx) is not ast.Load or n.id in own or n.id in seen:
                    continue
                seen.add(n.id)
                if holder is not None and n.id == holder[1]:
                    continue
                bindings = model.lookup(n.id, defined_in, None)
                if bindings and all(kind == "value" and self._tensor_value(model, target, b_ctx, 0, holder)
                                    for _, kind, target, b_ctx in bindings):
                    return n.id
        return None

    def _tensor_value(self, model, value, ctx, depth, holder=None) -> bool:
        """``value`` visibly makes a tensor or a layer: a torch factory, ``nn.Parameter``, a
        ``torch.nn`` layer class or a module class of the file, moved or not; or, in the
        method that defines the loop function (``holder``: its class and ``self``'s name),
        an attribute of ``self`` every binding of which in the class does
        (``w_x, w_h = self.w_x, self.w_h`` in ``forward``)."""
        if depth > 4 or value is None or value is UNKNOWN or ctx is None:
            return False
        if type(value) is ast.Attribute and type(value.value) is ast.Name and holder is not None \
                and value.value.id == holder[1] and ctx.func is not None and ctx.func.cls is holder[0]:
            values = model.self_attr_values(holder[0], value.attr)
            return bool(values) and all(c is not None and self._tensor_value(model, v, c, depth + 1)
                                        for v, c in values)
        if type(value) is not ast.Call:
            return False
        q = model.call_name(value, ctx)
        if q is not None:
            if q in TORCH_FACTORIES or q in ("torch.nn.Parameter", "torch.nn.parameter.Parameter"):
                return True
            last = q.rsplit(".", 1)[-1]
            return q.startswith("torch.nn.") and last[:1].isupper() and not q.startswith("torch.nn.functional.")
        f = value.func
        if type(f) is ast.Attribute and f.attr in MOVE_METHODS:
            inner = f.value
            if type(inner) is ast.Call:
                return self._tensor_value(model, inner, ctx, depth + 1)
            if type(inner) is ast.Name:
                values = model.values(inner, ctx)
                return bool(values) and all(self._tensor_value(model, v, c, depth + 1) for v, c in values)
            return False
        return model.constructed_class(value, ctx) is not None


def _all_args(args: ast.arguments):
    out = list(args.posonlyargs) + list(args.args) + list(args.kwonlyargs)
    out += [a for a in (args.vararg, args.kwarg) if a is not None]
    return out


def _stored_names(func) -> set[str]:
    """Names a function binds itself (assignments, loop targets, imports, nested defs)."""
    out = set()
    for n in ast.walk(func):
        t = type(n)
        if t is ast.Name and type(n.ctx) in (ast.Store, ast.Del):
            out.add(n.id)
        elif t in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef) and n is not func:
            out.add(n.name)
        elif t in (ast.Import, ast.ImportFrom):
            out.update((a.asname or a.name).split(".")[0] for a in n.names)
        elif t is ast.arg:
            out.add(n.arg)
    return out
