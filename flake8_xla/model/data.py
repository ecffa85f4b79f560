"""Data sharding across replicas: which ``DataLoader(...)`` calls feed a step loop of
multi-process launched code, where their dataset comes from (built in the module, split
per rank, or unknown), whether a sampler shards it, and the ``DistributedSampler(...)``
calls that would read their world size and rank from a process group.
"""

from __future__ import annotations

import ast

from .scopes import UNKNOWN, ClassInfo, Ctx

#: spellings of torch's distributed sampler
DISTRIBUTED_SAMPLERS = ("torch.utils.data.distributed.DistributedSampler", "torch.utils.data.DistributedSampler")
#: samplers that visibly draw from the whole dataset on every replica
WHOLE_SAMPLERS = ("torch.utils.data.RandomSampler", "torch.utils.data.SequentialSampler",
                  "torch.utils.data.sampler.RandomSampler", "torch.utils.data.sampler.SequentialSampler")
#: map-style datasets a call builds from what it is given (no sharding of their own)
DATASET_BUILDERS = ("torch.utils.data.TensorDataset", "torch.utils.data.dataset.TensorDataset", "torch.load")
DATASET_PACKAGES = ("torchvision.datasets.", "torchaudio.datasets.")
MAP_DATASET_BASES = ("torch.utils.data.Dataset", "torch.utils.data.dataset.Dataset")
#: Hugging Face ``datasets``: ``load_dataset(..., split=...)`` is a map-style dataset whose
#: methods below return the same rows (transformed, filtered or reordered), never a shard
HF_LOAD_DATASET = "datasets.load_dataset"
HF_DATASET_METHODS = frozenset({
    "map", "filter", "shuffle", "select", "sort", "flatten", "with_format", "remove_columns",
    "rename_column", "rename_columns", "cast", "cast_column", "select_columns", "with_transform",
    "flatten_indices", "class_encode_column",
})
#: calls whose value names a replica (or the number of replicas): a dataset built from one is per rank
REPLICA_APIS = frozenset({
    "torch_xla.runtime.global_ordinal", "torch_xla.runtime.local_ordinal", "torch_xla.runtime.world_size",
    "torch_xla.runtime.process_index", "torch_xla.runtime.process_count", "torch_xla.runtime.host_index",
    "torch_xla.core.xla_model.get_ordinal", "torch_xla.core.xla_model.get_local_ordinal",
    "torch_xla.core.xla_model.xrt_world_size", "torch_xla.core.xla_model.is_master_ordinal",
    "torch.distributed.get_rank", "torch.distributed.get_world_size", "torch.distributed.get_node_local_rank",
    "datasets.distributed.split_dataset_by_node",
})
REPLICA_NAMES = frozenset({
    "rank", "local_rank", "global_rank", "ordinal", "local_ordinal", "global_ordinal", "world_size",
    "num_replicas", "num_shards", "shard_id", "shard_index", "shard", "replica", "replica_id", "index",
})


class Data:
    """Mixin of :class:`~flake8_xla.model.Model`; see the module docstring."""

    def launched_step_loaders(self) -> list[tuple[ast.Call, Ctx]]:
        """``DataLoader(...)`` calls (source order, each once) feeding a step loop of code a
        multi-process launch runs, in XLA code, built in that code or at module level; in
        project mode also a step loop of another module (:meth:`project_step_loaders`)."""
        if "launched_loaders" in self._cache:
            return self._cache["launched_loaders"]
        seen: dict[int, tuple] = {}
        for loop in self.loops if self.may_step() else ():
            if not (self.in_xla_code(loop.ctx) and self.is_launched(loop.ctx, multi_only=True)
                    and self.is_step_loop(loop)):
                continue
            for e in self.loop_iterables(loop):
                for call, c in self.loader_sources(e, loop.ctx):
                    if c.func is None or self.is_launched(c, multi_only=True):
                        seen.setdefault(id(call), (call, c))
        for call, c in self.project_step_loaders():  # (a step loop of another module)
            # (built at module level: only in a module that launches replicas; a script that
            # launches nothing hands it to the other module's loop in its one process)
            if self.in_xla_code(c) and (self.is_launched(c, multi_only=True)
                                        or (c.func is None and bool(self.launched(multi_only=True)))):
                seen.setdefault(id(call), (call, c))
        out = sorted(seen.values(), key=lambda p: (p[0].lineno, p[0].col_offset))
        self._cache["launched_loaders"] = out
        return out

    def sampler_kind(self, call: ast.Call, ctx: Ctx) -> str | None:
        """How a ``DataLoader(...)`` picks its samples: ``"none"`` (no sampler: the whole
        dataset), ``"whole"`` (a ``RandomSampler`` / ``SequentialSampler``), ``"distributed"``,
        or None (a batch sampler, a custom sampler, a splat: unknown)."""
        batch = self.kwarg(call, "batch_sampler", 4)
        if batch is UNKNOWN or (batch is not None and self.const(batch, ctx) is not None):
            return None
        sampler = self.kwarg(call, "sampler", 3)
        if sampler is UNKNOWN:
            return None
        if sampler is None or (type(sampler) is ast.Constant and sampler.value is None):
            return "none"
        return self.sampler_value_kind(sampler, ctx)

    def sampler_value_kind(self, expr: ast.AST, ctx: Ctx, project: bool = True) -> str | None:
        """``"whole"`` / ``"distributed"`` when every value ``expr`` may hold is built by a
        sampler of that kind (``RandomSampler(ds)``, ``DistributedSampler(ds, ...)``), also,
        with ``project``, returned by project functions that agree
        (:attr:`flake8_xla.project.HelperFacts.returns_sampler`: ``backend.sampler(ds)``); else None."""
        values = self.resolve_values(expr, ctx)
        if not values:
            return None
        kinds = set()
        for v, c in values:
            q = self.call_name(v, c) if type(v) is ast.Call else None
            if q in WHOLE_SAMPLERS:
                kinds.add("whole")
            elif q in DISTRIBUTED_SAMPLERS:
                kinds.add("distributed")
            elif project and type(v) is ast.Call and self.project_lookup is not None \
                    and self.callee_agree(v, c, "returns_sampler"):
                kinds.add(self.callee_agree(v, c, "returns_sampler"))
            else:
                return None
        return kinds.pop() if len(kinds) == 1 else None

    def dataset_built_here(self, expr: ast.AST, ctx: Ctx) -> bool:
        """True when every value ``expr`` may hold is a map-style dataset built in the module
        from what is visible and not split per replica: ``TensorDataset(...)``,
        ``torchvision.datasets.X(...)``, ``torch.load(...)``, a module class deriving only
        from ``torch.utils.data.Dataset`` (or nothing), followed through names, ``self.``
        attributes and module helpers' returns. A parameter, an unseen call, an
        ``IterableDataset``, or anything that names a rank or world size is not."""
        key = ("ds_here", id(expr))
        if key not in self._cache:
            self._cache[key] = False  # cycles are unknown
            self._cache[key] = self._dataset_built_here(expr, ctx)
        return self._cache[key]

    def _dataset_built_here(self, expr, ctx) -> bool:
        todo = [(expr, ctx, 0)]
        found = False
        while todo:
            e, c, depth = todo.pop()
            if depth > 8:
                return False
            t = type(e)
            if t in (ast.Name, ast.Attribute) and self.qualname(e, c) is None:
                if t is ast.Name:
                    bindings = self.read_bindings(e, c)
                    if not bindings or any(kind != "value" or b_ctx is None for _, kind, _, b_ctx in bindings):
                        return False
                    todo.extend((target, b_ctx, depth + 1) for _, _, target, b_ctx in bindings)
                else:
                    values = self.values(e, c)
                    if not values or any(v is None or vc is None for v, vc in values):
                        return False
                    todo.extend((v, vc, depth + 1) for v, vc in values)
                continue
            if t is ast.Subscript:  # load_dataset("imdb")["train"], ds.train_test_split(...)["train"]
                if type(e.slice) is ast.Constant and isinstance(e.slice.value, str) \
                        and self._hf_dataset_dict(e.value, c, depth + 1):
                    found = True
                    continue
                return False
            if t is not ast.Call or self._names_replica(e, c):
                return False
            q = self.call_name(e, c)
            if q == HF_LOAD_DATASET:  # a split of a Hugging Face dataset (map-style unless streaming)
                split = self.kwarg(e, "split")
                if not isinstance(split, ast.AST) or self._streaming(e, c) or type(split) in (ast.List, ast.Tuple) \
                        or (type(split) is ast.Constant and not isinstance(split.value, str)):
                    return False
                found = True
                continue
            f = e.func
            if q is None and type(f) is ast.Attribute and f.attr in HF_DATASET_METHODS:
                todo.append((f.value, c, depth + 1))  # ds.map(tokenize): the same rows
                continue
            helper = self.project_helper(e.func, c) if self.project_lookup is not None else None
            if helper is not None:  # a class of another project module
                if not helper.plain_dataset:
                    return False
                found = True
                continue
            if q is not None:
                if not (q in DATASET_BUILDERS or q.startswith(DATASET_PACKAGES)):
                    return False
                found = True
                continue
            f = e.func
            cls = self.class_named(f.id, c) if type(f) is ast.Name else None
            if cls is not None:
                if not self._plain_dataset_class(cls):
                    return False
                found = True
                continue
            funcs = self.function_of(f, c)
            if len(funcs) != 1 or not funcs[0].returns or any(p in REPLICA_NAMES for p in funcs[0].params):
                return False
            todo.extend((v, vc, depth + 1) for v, vc in funcs[0].returns)
        return found

    def _streaming(self, call: ast.Call, ctx: Ctx) -> bool:
        """``streaming=`` is not visibly false (an ``IterableDataset``: left alone)."""
        value = self.kwarg(call, "streaming")
        return value is not None and (not isinstance(value, ast.AST) or self.const(value, ctx) is not False)

    def _hf_dataset_dict(self, expr: ast.AST, ctx: Ctx, depth: int) -> bool:
        """``expr`` is a Hugging Face ``DatasetDict`` built here: ``load_dataset(...)`` with
        no ``split=`` and not streaming, or ``ds.train_test_split(...)`` of a dataset built
        here, through names."""
        if depth > 8:
            return False
        if type(expr) is ast.Name:
            bindings = self.read_bindings(expr, ctx)
            return bool(bindings) and all(kind == "value" and b_ctx is not None
                                          and self._hf_dataset_dict(v, b_ctx, depth + 1)
                                          for _, kind, v, b_ctx in bindings)
        if type(expr) is not ast.Call or self._names_replica(expr, ctx):
            return False
        if self.call_name(expr, ctx) == HF_LOAD_DATASET:
            return self.kwarg(expr, "split") is None and not self._streaming(expr, ctx)
        f = expr.func
        return type(f) is ast.Attribute and f.attr == "train_test_split" and self.call_name(expr, ctx) is None \
            and self.dataset_built_here(f.value, ctx)

    def plain_dataset_class(self, cls: ClassInfo) -> bool:
        """True for a module class that is a map-style dataset with no sharding of its own
        (see :meth:`_plain_dataset_class`)."""
        return self._plain_dataset_class(cls)

    def _plain_dataset_class(self, cls: ClassInfo) -> bool:
        """A module class that is a map-style dataset with no sharding of its own: its bases
        are ``torch.utils.data.Dataset``, ``object`` or such module classes, and none of its
        methods takes a rank or world size or asks the runtime or process group for one."""
        return not self.mro_any(cls, "unplain_ds", self._unplain_dataset_step)

    def _unplain_dataset_step(self, c: ClassInfo) -> bool:
        """One class of the MRO breaks :meth:`_plain_dataset_class` (memoised per class by
        ``mro_any``: a chain of N dataset subclasses reads each class once)."""
        result = False
        for base in c.node.bases:
            if type(base) is ast.Name and self.class_named(base.id, c.ctx) is not None:
                continue
            if type(base) is ast.Name and base.id == "object" and self.lookup("object", c.ctx, None) is None:
                continue
            if self.qualname(base, c.ctx) not in MAP_DATASET_BASES:
                result = True
        if c.node.keywords:
            result = True  # a metaclass: unknown
        for method in c.methods.values():
            if any(p in REPLICA_NAMES for p in method.params[1:]) or any(
                    self.call_name(call, x) in REPLICA_APIS or self._project_reads_replica(call, x)
                    for call, x in method.calls):
                result = True
        return result

    def _project_reads_replica(self, call: ast.Call, ctx: Ctx) -> bool:
        """Project mode: ``call`` calls a function of another project module that asks for
        the rank or world size (``files[get_rank()::get_world_size()]`` with ``get_rank``
        returning ``xr.global_ordinal()``: the light index's ``reads_replica``)."""
        if self.project_defs is None or type(call.func) not in (ast.Name, ast.Attribute):
            return False
        facts = self._project_def(call.func, ctx)
        return facts is not None and facts.reads_replica

    def _names_replica(self, call: ast.Call, ctx: Ctx) -> bool:
        """An argument of ``call`` (at any depth) names a replica: a rank-like name, the
        launched target's index parameter, a rank or world-size API, or a name assigned
        from one (``MyDataset(f"shard{rank}.pt")``, ``load(split=xr.global_ordinal())``)."""
        todo = [a.value if type(a) is ast.Starred else a for a in call.args] + [k.value for k in call.keywords]
        targets = self.launch_target_ids()
        steps = 0
        while todo:
            steps += 1
            if steps > 200:
                return True  # too much to read: treat as possibly per rank (silent)
            e = todo.pop()
            t = type(e)
            if t is ast.Name:
                if e.id.lower() in REPLICA_NAMES:
                    return True
                for _, kind, target, b_ctx in self.read_bindings(e, ctx) or ():
                    if kind == "param" and target is not None and id(target) in targets \
                            and self.is_launch_index(target, e.id):
                        return True
                    if kind == "value" and type(target) is ast.Call and b_ctx is not None \
                            and self.call_name(target, b_ctx) in REPLICA_APIS:
                        return True
                continue
            if t is ast.Attribute:
                if e.attr.lower() in REPLICA_NAMES:
                    return True
                todo.append(e.value)
                continue
            if t is ast.Call:
                if self.call_name(e, ctx) in REPLICA_APIS:
                    return True
            if t is ast.Lambda:
                continue
            todo.extend(n for n in ast.iter_child_nodes(e) if isinstance(n, ast.expr))
        return False

    def distributed_samplers(self) -> list[tuple[ast.Call, Ctx]]:
        """``DistributedSampler(...)`` calls in XLA code run by a multi-process launch."""
        return [(call, ctx) for call, ctx in self.calls_to(*DISTRIBUTED_SAMPLERS)
                if self.in_xla_code(ctx) and self.is_launched(ctx, multi_only=True)]

    def process_group_possible(self) -> bool:
        """True when something may set up the default process group for launched code: an
        ``init_process_group`` call in XLA-on code, or a helper imported from another module
        whose name says it sets up distribution (``distributed_init(cfg)``); in project mode,
        also when a module whose launched code reaches this one may (:attr:`project_setup`)."""
        if "pg_possible" not in self._cache:
            setup = self.project_setup
            found = bool(setup is not None and setup.process_group) or any(not self.is_xla_off(ctx) for _, ctx in self.calls_to(
                "torch.distributed.init_process_group", "torch.distributed.distributed_c10d.init_process_group"))
            if not found:
                launched = self.launched(multi_only=True)
                for f in self.functions:
                    if id(f) not in launched:
                        continue
                    for call, ctx in f.calls:
                        if self._imported_helper(call, ctx) and _sets_up_distribution(call):
                            found = True
                            break
                    if found:
                        break
            self._cache["pg_possible"] = found
        return self._cache["pg_possible"]


def _sets_up_distribution(call: ast.Call) -> bool:
    f = call.func
    ident = (f.id if type(f) is ast.Name else f.attr if type(f) is ast.Attribute else "").lower()
    return any(w in ident for w in ("dist", "init", "setup", "group", "rendezvous"))
