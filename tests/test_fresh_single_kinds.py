"""Issue 29: the kinds behind the single-file marks of ``tests/fresh/`` that were missed,
each as the smallest script that shows it, with its traps. Every positive test fails on the
code before its fix; each asserts the exact ``(line, column, code)`` set (flake8's 1-based
columns) of the codes it is about."""

from __future__ import annotations

import ast
import textwrap

from flake8_xla import engine, settings as settings_mod


def lint(source: str, select: str = "XLA", version: str | None = None) -> set:
    source = textwrap.dedent(source)
    found = engine.run(ast.parse(source), settings_mod.build(None, version), source)
    return {(f.line, f.col + 1, f.code) for f in found if f.code.startswith(select)}


# ------------------------------------------- XLA508: tensors made on a device named another way

def test_a_carried_sum_made_on_a_helper_device_parameter():
    """``total = torch.zeros((), device=device)`` where every caller passes the XLA device,
    the loop over a ``loader`` parameter every caller fills with a plain DataLoader."""
    assert lint('''\
        import torch
        import torch_xla
        from torch.utils.data import DataLoader


        @torch.no_grad()
        def validate(model, loader, device):
            total = torch.zeros((), device=device)
            for i, (x, y) in enumerate(loader):
                total += (model(x.to(device)) - y.to(device)).abs().mean()
                print((total / (i + 1)).item())
            return total


        def main(ds):
            device = torch_xla.device()
            model = torch.nn.Linear(4, 4).to(device)
            validate(model, DataLoader(ds, batch_size=8), device)
        ''', "XLA508") == {(9, 5, "XLA508")}


def test_a_device_parameter_a_caller_fills_with_the_cpu_is_unknown():
    """One caller passes ``"cpu"``: the carried sum may live on the host; and a loader
    parameter a caller fills with an ``MpDeviceLoader`` syncs per batch: both silent."""
    assert lint('''\
        import torch
        import torch_xla
        import torch_xla.distributed.parallel_loader as pl
        from torch.utils.data import DataLoader


        def validate(model, loader, device):
            total = torch.zeros((), device=device)
            for x, y in loader:
                total += model(x).sum()
                print(total.item())


        def validate_dev(model, loader, device):
            total = torch.zeros((), device=device)
            for x, y in loader:
                total += model(x).sum()
                print(total.item())


        def main(ds):
            device = torch_xla.device()
            model = torch.nn.Linear(4, 4).to(device)
            validate(model, DataLoader(ds), device)
            validate(model.cpu(), DataLoader(ds), "cpu")
            validate_dev(model, pl.MpDeviceLoader(DataLoader(ds), device), device)
        ''', "XLA508") == set()


def test_a_tensor_made_on_the_device_of_a_moved_models_parameter():
    """Power iteration on ``w``, handed ``p.detach()`` for each ``p`` of
    ``model.named_parameters()`` of a model moved to the XLA device: ``torch.ones(n,
    device=w.device)`` is on the device, and ``v`` grows each iteration."""
    assert lint('''\
        import torch
        import torch_xla


        def top_singular_value(w, iters=100):
            v = torch.ones(w.shape[1], device=w.device)
            for _ in range(iters):
                v = w.t() @ (w @ v)
                v = v / v.norm()
                print((w @ v).norm().item())


        def main():
            device = torch_xla.device()
            model = torch.nn.Linear(8, 8).to(device)
            for name, p in model.named_parameters():
                top_singular_value(p.detach())
            for p in model.parameters():
                top_singular_value(p)
        ''', "XLA508") == {(7, 5, "XLA508")}


def test_parameters_of_a_module_on_the_host_or_moved_back_are_no_device_tensors():
    """A model never moved, one moved back with ``.cpu()``, and a helper also called on a
    CPU tensor: ``w.device`` may be the CPU, silent."""
    assert lint('''\
        import torch
        import torch_xla


        def top_singular_value(w, iters=100):
            v = torch.ones(w.shape[1], device=w.device)
            for _ in range(iters):
                v = w.t() @ (w @ v)
                print(v.norm().item())


        def power(w, iters=100):
            v = torch.ones(w.shape[1], device=w.device)
            for _ in range(iters):
                v = w.t() @ (w @ v)
                print(v.norm().item())


        def spectral(w, iters=100):
            v = torch.ones(w.shape[1], device=w.device)
            for _ in range(iters):
                v = w.t() @ (w @ v)
                print(v.norm().item())


        def main():
            device = torch_xla.device()
            host = torch.nn.Linear(8, 8)
            for p in host.parameters():
                top_singular_value(p)
            model = torch.nn.Linear(8, 8).to(device)
            model.cpu()
            for p in model.parameters():
                power(p)
            moved = torch.nn.Linear(8, 8).to(device)
            for p in moved.parameters():
                spectral(p)
            spectral(torch.randn(8, 8))
        ''', "XLA508") == set()


# ------------------------------------------- XLA910: the ranks of a dataset's table rows

def test_ranks_of_rows_of_tables_the_dataset_builds_in_init():
    """``self.ids = torch.randint(0, v, (n, L))`` and ``self.labels = torch.randint(0, 2, (n,))``
    in ``__init__``, ``__getitem__`` returning ``self.ids[i]`` / ``self.labels[i]``: ranks 2
    and 1 once batched, beside one 2-D spec (and a 4-D spec through a name over
    ``torch.randn(n, 3, 32, 32)`` images)."""
    assert lint('''\
        import numpy as np
        import torch
        import torch_xla
        import torch_xla.distributed.parallel_loader as pl
        import torch_xla.distributed.spmd as xs
        from torch.utils.data import DataLoader, Dataset


        class Reviews(Dataset):
            def __init__(self, n=100, seq_len=16):
                self.ids = torch.randint(0, 1000, (n, seq_len))
                self.mask = torch.ones(n, seq_len, dtype=torch.long)
                self.labels = torch.randint(0, 2, (n,))

            def __getitem__(self, i):
                return {"input_ids": self.ids[i], "attention_mask": self.mask[i], "label": self.labels[i]}


        class Images(Dataset):
            def __init__(self, n=100):
                self.images = torch.randn(n, 3, 32, 32)
                self.targets = torch.randint(0, 10, size=(n,))

            def __getitem__(self, idx):
                return {"pixel_values": self.images[idx], "labels": self.targets[idx].long()}


        def main(mesh, image_mesh):
            device = torch_xla.device()
            loader = DataLoader(Reviews(), batch_size=8)
            a = pl.MpDeviceLoader(loader, device, input_sharding=xs.ShardingSpec(mesh, ("data", None)))
            spec = xs.ShardingSpec(image_mesh, ("data", None, None, None))
            b = pl.MpDeviceLoader(DataLoader(Images(), batch_size=8), device, input_sharding=spec)
            return a, b
        ''', "XLA910") == {(31, 9, "XLA910"), (33, 9, "XLA910")}


def test_rows_of_one_rank_or_picked_by_an_unknown_index_are_silent():
    """Every value of the dict batched to the spec's rank (an LM's ids and labels, both
    ``(n, L)``), and rows picked by an index that may be a list (``self.ids[self.order[i]]``):
    no rank shows that differs, no finding."""
    assert lint('''\
        import torch
        import torch_xla
        import torch_xla.distributed.parallel_loader as pl
        import torch_xla.distributed.spmd as xs
        from torch.utils.data import DataLoader, Dataset


        class LM(Dataset):
            def __init__(self, n=100, seq_len=16):
                self.ids = torch.randint(0, 1000, (n, seq_len))
                self.labels = torch.randint(0, 1000, (n, seq_len))

            def __getitem__(self, i):
                return {"input_ids": self.ids[i], "labels": self.labels[i]}


        class Shuffled(Dataset):
            def __init__(self, n=100, seq_len=16):
                self.ids = torch.randint(0, 1000, (n, seq_len))
                self.labels = torch.randint(0, 2, (n,))
                self.order = torch.randperm(n)

            def __getitem__(self, i):
                return {"input_ids": self.ids[i], "labels": self.labels[self.order[i]]}


        def main(mesh):
            device = torch_xla.device()
            spec = xs.ShardingSpec(mesh, ("data", None))
            a = pl.MpDeviceLoader(DataLoader(LM(), batch_size=8), device, input_sharding=spec)
            b = pl.MpDeviceLoader(DataLoader(Shuffled(), batch_size=8), device, input_sharding=spec)
            return a, b
        ''', "XLA910") == set()


# ------------------------------------------- XLA911: captures read from self in the enclosing method

def test_scan_body_closing_over_names_bound_to_self_tensors():
    """``w_x, w_h = self.w_x, self.w_h`` in ``forward``, then a nested step function reading
    ``w_x``: the names hold the module's parameters, captured by the traced function."""
    assert lint('''\
        import torch
        import torch.nn as nn
        from torch_xla.experimental.scan import scan


        class RNN(nn.Module):
            def __init__(self):
                super().__init__()
                self.w_x = nn.Parameter(torch.randn(4, 8))
                self.w_h = nn.Parameter(torch.eye(8))

            def forward(self, seq, h0):
                w_x, w_h = self.w_x, self.w_h

                def step(h, x):
                    h = torch.tanh(x @ w_x + h @ w_h)
                    return h, h

                return scan(step, h0, seq)
        ''', "XLA911") == {(19, 16, "XLA911")}


def test_names_bound_to_self_numbers_or_carried_weights_are_silent():
    """``scale = self.scale`` (a float) read in the body, and the weights read from ``self``
    but handed in the carry: nothing captured is a tensor."""
    assert lint('''\
        import torch
        import torch.nn as nn
        from torch_xla.experimental.scan import scan


        class RNN(nn.Module):
            def __init__(self):
                super().__init__()
                self.w = nn.Parameter(torch.eye(8))
                self.scale = 0.5

            def forward(self, seq, h0):
                scale, w = self.scale, self.w

                def step(carry, x):
                    h, w_c = carry
                    h = torch.tanh(x @ w_c + h * scale)
                    return (h, w_c), h

                return scan(step, (h0, w), seq)
        ''', "XLA911") == set()


# ------------------------------------------- XLA504: a forward of a module handed to a helper

def test_a_timer_around_the_forward_of_a_model_every_caller_hands_the_helper():
    """``benchmark(model, device)``: the model every caller passes is a module moved to the
    device, ``x`` a tensor moved there: ``model(x)`` is lazy work, the stop reads the clock
    before it ran."""
    assert lint('''\
        import time
        import torch
        import torch_xla


        def benchmark(model, device):
            x = torch.randn(8, 4).to(device)
            t0 = time.perf_counter()
            out = model(x)
            return out, time.perf_counter() - t0


        def main():
            device = torch_xla.device()
            model = torch.nn.Linear(4, 4).to(device)
            benchmark(model, device)
        ''', "XLA504") == {(10, 17, "XLA504")}


def test_a_helper_some_caller_hands_a_plain_function_is_unknown():
    """One caller passes a plain function for ``model``: what it computes cannot be seen."""
    assert lint('''\
        import time
        import torch
        import torch_xla


        def benchmark(model, device):
            x = torch.randn(8, 4).to(device)
            t0 = time.perf_counter()
            out = model(x)
            return out, time.perf_counter() - t0


        def main():
            device = torch_xla.device()
            model = torch.nn.Linear(4, 4).to(device)
            benchmark(model, device)
            benchmark(lambda t: t.cpu(), device)
        ''', "XLA504") == set()


# ------------------------------------------- XLA902: an SPMD program launched by mistake

def test_a_launch_under_spmd_switched_on_before_it_is_still_an_spmd_program():
    """``xr.use_spmd()`` then ``torch_xla.launch(run)``: the launch raises (XLA004) and the
    fix calls ``run`` directly, as the SPMD program it is: ``xr.world_size()`` in its mesh is
    1 (XLA902)."""
    assert lint('''\
        import numpy as np
        import torch_xla
        import torch_xla.distributed.spmd as xs
        import torch_xla.runtime as xr


        def run(index):
            n = xr.world_size()
            mesh = xs.Mesh(np.arange(n), (1, n), ("data", "model"))
            return mesh


        if __name__ == "__main__":
            xr.use_spmd()
            torch_xla.launch(run)
        ''', "XLA9") == {(8, 9, "XLA902")}


def test_a_multi_process_launch_on_the_other_branch_of_the_switch_keeps_its_world_size():
    """SPMD on one branch, ``xmp.spawn`` on the other: the launched replicas are a
    multi-process program, where ``xr.world_size()`` is the replica count."""
    assert lint('''\
        import sys
        import numpy as np
        import torch_xla
        import torch_xla.distributed.spmd as xs
        import torch_xla.distributed.xla_multiprocessing as xmp
        import torch_xla.runtime as xr


        def run(index):
            n = xr.world_size()
            mesh = xs.Mesh(np.arange(n), (1, n), ("data", "model"))
            return mesh


        if __name__ == "__main__":
            if "--spmd" in sys.argv:
                xr.use_spmd()
                print("spmd")
            else:
                xmp.spawn(run)
        ''', "XLA9") == set()


# ------------------------------------------- XLA701/XLA702: a CUDA recipe run on the XLA device

def test_a_function_that_runs_torch_xla_itself_is_xla_code_whatever_branch_calls_it():
    """``if recipe == "cuda": train_cuda_recipe(...)``: the branch names CUDA, but the
    function draws from an ``MpDeviceLoader`` itself: its GradScaler and CUDA autocast are
    on the XLA device."""
    assert lint('''\
        import torch
        import torch_xla
        import torch_xla.distributed.parallel_loader as pl


        def train_cuda_recipe(model, loader, device, optimizer):
            scaler = torch.cuda.amp.GradScaler()
            for x, y in pl.MpDeviceLoader(loader, device):
                with torch.cuda.amp.autocast():
                    loss = model(x).sum()
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()


        def main(model, loader, optimizer, recipe="bf16"):
            device = torch_xla.device()
            if recipe == "cuda":
                train_cuda_recipe(model, loader, device, optimizer)
        ''', "XLA70") == {(7, 14, "XLA702"), (9, 14, "XLA701")}


def test_a_cuda_branch_function_using_torch_xla_only_under_its_own_backend_test_stays_off():
    """The function called only on the CUDA branch reaches torch_xla only under its own
    ``if on_tpu:`` (or not at all): still the CUDA path, silent."""
    assert lint('''\
        import torch
        import torch_xla
        import torch_xla.distributed.parallel_loader as pl


        def train_gpu(model, loader, optimizer, on_tpu):
            scaler = torch.cuda.amp.GradScaler()
            if on_tpu:
                loader = pl.MpDeviceLoader(loader, torch_xla.device())
            for x, y in loader:
                with torch.cuda.amp.autocast():
                    loss = model(x).sum()
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()


        def train_plain_gpu(model, loader, optimizer):
            scaler = torch.cuda.amp.GradScaler()
            for x, y in loader:
                with torch.cuda.amp.autocast():
                    loss = model(x).sum()
                scaler.scale(loss).backward()
                scaler.step(optimizer)


        def main(model, loader, optimizer, backend):
            if backend == "cuda":
                train_gpu(model, loader, optimizer, False)
                train_plain_gpu(model, loader, optimizer)
        ''', "XLA70") == set()


# ------------------------------------------- XLA404: a head in the moved model's optimizer

def test_a_head_never_called_in_the_optimizer_of_a_moved_model():
    """``model.to(device)`` moves the model; ``value_head`` joins its optimizer but is never
    moved: the function places things on the device, yet the head is no CPU net kept on
    purpose (it is never called with host data)."""
    assert lint('''\
        import torch
        import torch.nn as nn
        import torch_xla


        def train(steps):
            device = torch_xla.device()
            model = nn.Linear(8, 8)
            model.to(device)
            value_head = nn.Linear(8, 1)
            params = list(model.parameters()) + list(value_head.parameters())
            optimizer = torch.optim.AdamW(params, lr=3e-4)
            for step in range(steps):
                loss = model(torch.randn(4, 8).to(device)).sum()
                loss.backward()
                optimizer.step()
                torch_xla.sync()
        ''', "XLA404") == {(10, 5, "XLA404")}


def test_a_cpu_net_fed_host_data_or_a_head_beside_no_moved_module_stays_silent():
    """A policy net called with host data (kept on the CPU on purpose), and a head never
    called whose optimizer holds no module the function moves: silent."""
    assert lint('''\
        import torch
        import torch.nn as nn
        import torch_xla
        import torch_xla.distributed.parallel_loader as pl


        def train(loader, steps, backbone):
            device = torch_xla.device()
            model = nn.Linear(8, 8)
            model.to(device)
            policy = nn.Linear(8, 1)
            optimizer = torch.optim.AdamW(list(model.parameters()) + list(policy.parameters()))
            for x, y in pl.MpDeviceLoader(loader, device):
                loss = model(x).sum() + policy(torch.randn(4, 8)).sum().to(device)
                loss.backward()
                optimizer.step()


        def train_other(loader, backbone):
            device = torch_xla.device()
            head = nn.Linear(8, 1)
            optimizer = torch.optim.AdamW(list(backbone.parameters()) + list(head.parameters()))
            for x, y in pl.MpDeviceLoader(loader, device):
                loss = backbone(x).sum()
                loss.backward()
                optimizer.step()
        ''', "XLA404") == set()


# ------------------------------------------- XLA901: the launching process's one value

def test_a_cache_path_from_the_namespace_the_launch_hands_every_process():
    """``torch_xla.launch(_mp_fn, args=(args,))``: ``args.cache_dir`` is one path, copied to
    every process, with ``readonly=False``."""
    assert lint('''\
        import argparse
        import torch_xla
        import torch_xla.runtime as xr


        def _mp_fn(index, args):
            xr.initialize_cache(args.cache_dir, readonly=False)


        if __name__ == "__main__":
            ap = argparse.ArgumentParser()
            ap.add_argument("--cache-dir", default="/tmp/xla_cache")
            torch_xla.launch(_mp_fn, args=(ap.parse_args(),))
        ''', "XLA901") == {(7, 5, "XLA901")}


def test_a_cache_path_per_process_or_from_a_function_also_called_directly_is_unknown():
    """The namespace rewritten with the index, an item picked by the index, and a launched
    function also called directly (its argument may differ): silent."""
    assert lint('''\
        import torch_xla
        import torch_xla.runtime as xr


        def _mp_fn(index, args):
            args.cache_dir = f"{args.cache_dir}_{index}"
            xr.initialize_cache(args.cache_dir, readonly=False)


        def _mp_pick(index, args):
            xr.initialize_cache(args.cache_dirs[index], readonly=False)


        def _mp_both(index, path):
            xr.initialize_cache(path, readonly=False)


        def main(args):
            torch_xla.launch(_mp_fn, args=(args,))
            torch_xla.launch(_mp_pick, args=(args,))
            torch_xla.launch(_mp_both, args=(args.cache_dir,))
            _mp_both(0, args.other_dir)
        ''', "XLA901") == set()


# ------------------------------------------- XLA505: a sync after the accumulation loop

def test_a_sync_between_the_accumulation_loops_backward_passes_and_the_step():
    """The backward passes run in ``for _ in range(accum):``; the sync after that loop and
    before ``optimizer.step()`` cuts the step in two graphs."""
    assert lint('''\
        import torch
        import torch_xla


        def train(model, batches, optimizer, iters, accum):
            for it in range(iters):
                for _ in range(accum):
                    x, y = next(batches)
                    loss = model(x, y)
                    (loss / accum).backward()
                torch_xla.sync()
                optimizer.step()
                optimizer.zero_grad()
                torch_xla.sync()
        ''', "XLA505") == {(11, 9, "XLA505")}


def test_a_sync_after_an_inner_loop_that_steps_itself_or_after_the_step_is_silent():
    """An inner loop that takes its own optimizer steps (the sync ends a round of steps), and
    a sync after the step: neither splits one step."""
    assert lint('''\
        import torch
        import torch_xla


        def train(model, batches, optimizer, iters, accum):
            for it in range(iters):
                for _ in range(accum):
                    x, y = next(batches)
                    model(x, y).backward()
                    optimizer.step()
                torch_xla.sync()
                for _ in range(accum):
                    x, y = next(batches)
                    model(x, y).backward()
                optimizer.step()
                torch_xla.sync()
        ''', "XLA505") == set()


# ------------------------------------------- XLA503: a mask in one position of a tuple index

def test_a_device_mask_in_a_tuple_index_of_forward():
    """Patch dropout in ``forward``: ``keep = torch.rand(n, device=x.device) >= p``, then
    ``x[:, keep]``: as many patches as the random mask keeps."""
    assert lint('''\
        import torch
        import torch_xla
        from torch import nn


        class ViT(nn.Module):
            def __init__(self):
                super().__init__()
                self.embed = nn.Conv2d(3, 8, 4, 4)

            def forward(self, images):
                x = self.embed(images).flatten(2).transpose(1, 2)
                keep = torch.rand(x.shape[1], device=x.device) >= 0.5
                x = x[:, keep]
                return x[..., keep.logical_not()].sum()
        ''', "XLA503") == {(14, 13, "XLA503"), (15, 16, "XLA503")}


def test_a_tuple_index_of_positions_or_of_a_host_mask_is_silent():
    """A fixed number of positions (``torch.randperm(n, device=...)[:k]``) and a host mask
    keep the shape static: silent."""
    assert lint('''\
        import torch
        import torch_xla
        from torch import nn


        class ViT(nn.Module):
            def __init__(self):
                super().__init__()
                self.embed = nn.Conv2d(3, 8, 4, 4)

            def forward(self, images):
                x = self.embed(images).flatten(2).transpose(1, 2)
                idx = torch.randperm(x.shape[1], device=x.device)[:4]
                host = torch.rand(16) >= 0.5
                return x[:, idx].sum() + x[:, 0:4].sum() + x[0, host.nonzero()[0]].sum()
        ''', "XLA503") == set()
