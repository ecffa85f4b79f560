"""Issue 29 section 2: misses and wrong findings of built rules, each as the smallest
script that shows the kind. Every test fails on the code before the fix; each asserts the
exact ``(line, column, code)`` set (flake8's 1-based columns) of the codes it is about."""

from __future__ import annotations

import ast
import textwrap

from flake8_xla import engine, settings as settings_mod


def lint(source: str, select: str = "XLA", version: str | None = None) -> set:
    source = textwrap.dedent(source)
    found = engine.run(ast.parse(source), settings_mod.build(None, version), source)
    return {(f.line, f.col + 1, f.code) for f in found if f.code.startswith(select)}


def messages(source: str, code: str, version: str | None = None) -> list:
    source = textwrap.dedent(source)
    found = engine.run(ast.parse(source), settings_mod.build(None, version), source)
    return [f.message for f in found if f.code == code]


# -------------------------------------------------------------- 3. host values (XLA501/507)

def test_a_python_number_dividing_the_loss_stays_a_number():
    """``loss / grad_accum_steps`` with an int divisor: the divisor, what is computed from it,
    its prints and the f-string file names are host values (no XLA501 / XLA507)."""
    assert lint('''\
        import torch_xla.core.xla_model as xm
        import torch_xla.distributed.parallel_loader as pl


        def train(model, loss_fn, opt, loader, device, config):
            dl = pl.MpDeviceLoader(loader, device)
            grad_accum_steps = config["grad_accum_steps"]
            scale = int(config["scale"])
            effective = grad_accum_steps * 8
            for step, (x, y) in enumerate(dl):
                loss = loss_fn(model(x), y)
                loss = loss / grad_accum_steps * scale
                loss.backward()
                xm.optimizer_step(opt)
                print(f"step {step} accum {grad_accum_steps} eff {effective}")
                print("scale", scale, step)
                xm.save(model.state_dict(), f"ckpt_{grad_accum_steps}_{scale}.pt")
                if step % 10 == 0:
                    print(f"{effective}")
                    print(loss.item())
        ''', "XLA5") == {(20, 19, "XLA507")}


def test_a_device_divisor_still_makes_a_device_value():
    """The loss divided by a token count computed on the device: the count is still a tensor."""
    assert lint('''\
        import torch_xla.core.xla_model as xm
        import torch_xla.distributed.parallel_loader as pl


        def train(model, loss_fn, opt, loader, device):
            for x, y, mask in pl.MpDeviceLoader(loader, device):
                n_tokens = mask.sum()
                loss = loss_fn(model(x), y) / n_tokens
                loss.backward()
                xm.optimizer_step(opt)
                print(n_tokens.item())
        ''', "XLA5") == {(11, 15, "XLA501")}


def test_a_read_on_the_first_iteration_only_is_no_step_read():
    """``if batch_idx == 0:`` / ``if step == 0:`` runs once: not XLA501 (nor XLA507)."""
    assert lint('''\
        import torch_xla.core.xla_model as xm
        import torch_xla.distributed.parallel_loader as pl


        def train(model, loss_fn, opt, loader, device, epoch):
            global_step = 0
            for batch_idx, (x, y) in enumerate(pl.MpDeviceLoader(loader, device)):
                loss = loss_fn(model(x), y)
                loss.backward()
                xm.optimizer_step(opt)
                global_step += 1
                if batch_idx == 0:
                    print(loss.item())
                if 1 == global_step and epoch == 0:
                    print(f"first loss {loss}")
                if batch_idx == epoch:
                    print(loss.item())
                else:
                    print(float(loss))
        ''', "XLA5") == {(17, 19, "XLA501"), (19, 19, "XLA501")}


# -------------------------------------------------------------- 4. the torch_xla module on an object

TRAINER = '''\
import torch
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.distributed.xla_multiprocessing as xmp


class Base:
    def __init__(self):
        self._xm = xm


class Trainer(Base):
    def __init__(self, model, opt, loader):
        super().__init__()
        self.device = self._xm.xla_device()
        self.model = model.to(self.device)
        self.opt = opt
        self.loader = loader

    def fit(self):
        for x, y in pl.MpDeviceLoader(self.loader, self.device):
            loss = self.model(x).sum()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
            self._xm.optimizer_step(self.opt)
            self._xm.mark_step()
            {extra}


def _mp_fn(index):
    Trainer(torch.nn.Linear(2, 2), None, None).fit()


if __name__ == "__main__":
    xmp.spawn(_mp_fn)
'''


def test_the_xm_module_kept_on_self_resolves_like_xm():
    """``self._xm = xm`` (in a base class): ``self._xm.xla_device()`` is XLA804,
    ``self._xm.mark_step()`` XLA805, the clip before ``self._xm.optimizer_step`` XLA203."""
    assert lint(TRAINER.format(extra="pass"), "XLA") == {
        (15, 23, "XLA804"), (24, 13, "XLA203"), (26, 13, "XLA805")}


def test_an_attribute_rebound_to_something_else_resolves_to_nothing():
    """``self._xm`` also bound to another object in another method: unknown, silent."""
    source = TRAINER.format(extra="pass").replace(
        "    def fit(self):", "    def fake(self):\n        self._xm = object()\n\n    def fit(self):")
    assert lint(source, "XLA8") == set()


# -------------------------------------------------------------- 2. XLA504 timers

def test_a_timer_around_a_loop_that_never_syncs_is_reported():
    """Only a loop that cuts the graph each iteration times whole steps; a visible loop with no
    sync (``range``, a plain DataLoader) times tracing only. A loop over a parameter (maybe a
    device loader) and a synced loop stay silent."""
    assert lint('''\
        import time
        import torch
        import torch_xla.core.xla_model as xm
        from torch.utils.data import DataLoader


        def train(ds, model, optimizer, loss_fn, x, y, loader):
            t0 = time.perf_counter()
            for _ in range(10):
                loss_fn(model(x), y).backward()
                optimizer.step()
            print(time.perf_counter() - t0)
            t1 = time.perf_counter()
            for a, b in DataLoader(ds, batch_size=8):
                loss_fn(model(a), b).backward()
                optimizer.step()
            print(time.perf_counter() - t1)
            t2 = time.perf_counter()
            for _ in range(10):
                loss_fn(model(x), y).backward()
                optimizer.step()
                xm.mark_step()
            print(time.perf_counter() - t2)
            t3 = time.perf_counter()
            for a, b in loader:
                loss_fn(model(a), b).backward()
                optimizer.step()
            print(time.perf_counter() - t3)
        ''', "XLA504") == {(12, 11, "XLA504"), (17, 11, "XLA504")}


def test_timers_on_self_in_else_branches_and_helpers_that_read():
    """A timer kept on ``self``; a second timer in an ``else`` that reuses the name; a helper
    whose step ends in ``.item()`` has waited (silent)."""
    assert lint('''\
        import time
        import torch_xla.core.xla_model as xm


        class Runner:
            def step_read(self, model, x, y, loss_fn, optimizer):
                loss = loss_fn(model(x), y)
                loss.backward()
                xm.optimizer_step(optimizer)
                return loss.item()

            def run(self, loader, model, optimizer, loss_fn, warm):
                for x, y in loader:
                    self.t0 = time.perf_counter()
                    loss_fn(model(x), y).backward()
                    xm.optimizer_step(optimizer)
                    print(time.perf_counter() - self.t0)
                    t1 = time.perf_counter()
                    self.step_read(model, x, y, loss_fn, optimizer)
                    print(time.perf_counter() - t1)
                    if warm:
                        t2 = time.time()
                        loss_fn(model(x), y).backward()
                        xm.optimizer_step(optimizer)
                        print(time.time() - t2)
                    else:
                        t2 = time.time()
                        loss_fn(model(x), y).backward()
                        xm.optimizer_step(optimizer)
                        print(time.time() - t2)
        ''', "XLA504") == {(17, 19, "XLA504"), (25, 23, "XLA504"), (30, 23, "XLA504")}


# -------------------------------------------------------------- 5. XLA903 device from a helper

HF_MOVE = '''\
import torch_xla.core.xla_model as xm
from transformers import AutoModelForCausalLM


def get_device():
    return xm.xla_device()


def main():
    device = get_device()
    model = AutoModelForCausalLM.from_pretrained("gpt2")
    model = model.to(device)
    {after}
    return model


def chained():
    device = get_device()
    lm = AutoModelForCausalLM.from_pretrained("gpt2").to(device)
    return lm
'''


def test_a_device_from_a_helper_is_the_xla_device_for_the_move():
    """``device = get_device()`` (a module helper returning the XLA device), the move a
    separate statement or chained: XLA903, naming ``model.tie_weights()``."""
    source = HF_MOVE.format(after="pass")
    assert lint(source, "XLA903") == {(12, 13, "XLA903"), (19, 10, "XLA903")}
    assert any("model.tie_weights()" in m for m in messages(source, "XLA903"))
    assert lint(HF_MOVE.format(after="model.tie_weights()"), "XLA903") == {(19, 10, "XLA903")}
    cpu = HF_MOVE.replace("return xm.xla_device()", 'return "cpu"')
    assert lint(cpu.format(after="pass"), "XLA903") == set()


# -------------------------------------------------------------- 7 / 8a. rank tests through predicate helpers

PREDICATES = '''\
import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr
import torch_xla.distributed.xla_multiprocessing as xmp


def is_master():
    return xr.global_ordinal() == 0


def is_main_process():
    return is_master()


def get_rank():
    return xr.global_ordinal()


def save(model, path):
    if not is_main_process():
        return
    xm.save(model.state_dict(), path)


def meet():
    if is_master():
        xm.rendezvous("a")
    if get_rank() == 0:
        xm.rendezvous("b")


def everyone(model, path):
    if is_even(3):
        xm.rendezvous("c")
    xm.save(model.state_dict(), path)


def is_even(n):
    return n % 2 == 0


def _mp_fn(index):
    model = torch.nn.Linear(2, 2).to(torch_xla.device())
    save(model, "a.pt")
    meet()
    everyone(model, "b.pt")


if __name__ == "__main__":
    xmp.spawn(_mp_fn)
'''


def test_a_rank_test_through_predicate_helpers_guards():
    """``if not is_main_process(): return`` (a predicate of a predicate of the global
    ordinal) guards the save (XLA602), and ``if is_master():`` / ``if get_rank() == 0:`` the
    rendezvous (XLA506); a predicate on a plain number guards nothing."""
    assert lint(PREDICATES, "XLA") == {(23, 5, "XLA602"), (28, 9, "XLA506"), (30, 9, "XLA506")}


# -------------------------------------------------------------- 8. earlier hidden sets

def test_a_getattr_probe_fallback_is_version_adaptive():
    """``getattr(torch_xla, "sync", xm.mark_step)`` picks what exists at run time: no XLA805
    at the fallback (a plain ``xm.mark_step`` elsewhere still is)."""
    assert lint('''\
        import torch_xla
        import torch_xla.core.xla_model as xm

        sync = getattr(torch_xla, "sync", xm.mark_step)
        other = getattr(object(), "sync", xm.mark_step)
        ''', "XLA805") == {(5, 35, "XLA805")}


def test_a_double_step_through_the_objects_own_method():
    """``self.update()`` runs ``xm.optimizer_step(self.opt)``; ``self.opt.step()`` in the same
    iteration applies the update twice (XLA207). A conditional update inside the method, or
    another optimizer, is not."""
    assert lint('''\
        import torch_xla.core.xla_model as xm


        class Trainer:
            def __init__(self, model, opt, other):
                self.model, self.opt, self.other = model, opt, other

            def update(self):
                xm.optimizer_step(self.opt)

            def maybe_update(self, flag):
                if flag:
                    xm.optimizer_step(self.opt)

            def fit(self, loader, flag):
                for x in loader:
                    self.model(x).sum().backward()
                    self.update()
                    self.opt.step()

            def fit2(self, loader, flag):
                for x in loader:
                    self.model(x).sum().backward()
                    self.maybe_update(flag)
                    self.opt.step()
                    self.other.step()
        ''', "XLA207") == {(19, 13, "XLA207")}


def test_a_sync_under_a_step_gate_is_no_per_step_sync_for_a_dataloader_loop():
    """``if step % 10 == 0: xm.mark_step()`` in a loop over a plain DataLoader: XLA301 (nine
    steps of ten grow one graph); an ungated sync is one."""
    assert lint('''\
        import torch
        import torch_xla
        import torch_xla.core.xla_model as xm
        from torch.utils.data import DataLoader


        def train(ds, model, opt, device):
            for step, (x, y) in enumerate(DataLoader(ds, batch_size=8)):
                model(x.to(device)).sum().backward()
                xm.optimizer_step(opt)
                if step % 10 == 0:
                    xm.mark_step()
            for step, (x, y) in enumerate(DataLoader(ds, batch_size=8)):
                model(x.to(device)).sum().backward()
                xm.optimizer_step(opt)
                xm.mark_step()
        ''', "XLA301") == {(8, 5, "XLA301")}


def test_a_rank_from_a_helper_reading_rank_seeds_per_rank():
    """``torch.manual_seed(args.seed + get_rank())`` where ``get_rank()`` returns
    ``int(os.environ.get("RANK", 0))``: XLA205."""
    assert lint('''\
        import os
        import torch
        import torch_xla
        import torch_xla.core.xla_model as xm
        import torch_xla.distributed.xla_multiprocessing as xmp


        def get_rank():
            return int(os.environ.get("RANK", 0))


        def _mp_fn(index, args):
            torch.manual_seed(args.seed + get_rank())
            model = torch.nn.Linear(2, 2).to(torch_xla.device())
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            for _ in range(3):
                model(torch.zeros(2, 2, device="xla")).sum().backward()
                xm.optimizer_step(opt)
                torch_xla.sync()


        if __name__ == "__main__":
            xmp.spawn(_mp_fn, args=(None,))
        ''', "XLA205") == {(13, 5, "XLA205")}


# -------------------------------------------------------------- 1. XLA403 backends by release

COMPILES = '''\
import torch
import torch_xla


def build(model):
    a = torch.compile(model, backend="aot_torchxla_trace_once")
    b = torch.compile(model, backend="openxla")
    c = torch.compile(model, backend="openxla_eval")
    return a, b, c
'''


def test_the_accepted_xla_backends_follow_the_target_release():
    """2.0 registers only the ``torchxla_*`` names, 2.1-2.3 both, 2.4+ only ``openxla`` /
    ``openxla_eval`` (torch's ``torch/_dynamo/backends/torchxla.py``, pytorch#106489, #122128)."""
    assert lint(COMPILES, "XLA403", version="2.0") == {(7, 9, "XLA403"), (8, 9, "XLA403")}
    assert lint(COMPILES, "XLA403", version="2.3") == set()
    assert lint(COMPILES, "XLA403", version="2.4") == {(6, 9, "XLA403")}
    assert lint(COMPILES, "XLA403") == {(6, 9, "XLA403")}
    assert messages(COMPILES, "XLA403") == [
        "backend='aot_torchxla_trace_once' is not registered with torch_xla 2.9; pass backend='openxla'"]


# -------------------------------------------------------------- 9. messages

def test_a_line_quoted_in_a_notebook_message_names_its_cell(tmp_path, monkeypatch, capsys):
    """XLA906's "(line N)" counts module lines across cells; in a notebook it says the cell and
    the line in it."""
    from test_notebook import build, run_cli

    build([("code", "import torch_xla\nimport torch_xla.runtime as xr"),
           ("markdown", "# set-up"),
           ("code", "x = 1\ndevice = torch_xla.device()"),
           ("code", "xr.use_spmd()")], tmp_path / "nb.ipynb")
    _, out, _ = run_cli(["nb.ipynb"], tmp_path, monkeypatch, capsys)
    assert out.splitlines() == [
        "nb.ipynb:cell 4:1:1: XLA906 xr.use_spmd() after the runtime started (cell 3, line 2): SIGSEGV or "
        "replicated tensors; call it first, before any device, seed or XLA tensor"]


def test_xrt_settings_of_a_gpu_script_point_to_pjrt_device_cuda():
    source = '''\
        import os
        os.environ["GPU_NUM_DEVICES"] = "4"
        os.environ["XRT_WORKERS"] = "localservice:0;grpc://localhost:40934"
        '''
    assert messages(source, "XLA810") == [
        "XRT_WORKERS has no effect since torch_xla 2.1; use PJRT: set PJRT_DEVICE=CUDA"]
    tpu = source.replace('os.environ["GPU_NUM_DEVICES"] = "4"', 'os.environ["XRT_TPU_CONFIG"] = "x"')
    assert all(m.endswith("PJRT_DEVICE=TPU") for m in messages(tpu, "XLA810"))


def test_the_step_closure_is_named_as_the_module_imports_it():
    """After ``--fix`` drops the ``xm`` import, XLA501 names the full module."""
    step = '''\
        import torch_xla
        {imports}


        def train(model, loss_fn, opt, loader):
            for x, y in loader:
                loss = loss_fn(model(x), y)
                loss.backward()
                opt.step()
                print(loss.item())
                torch_xla.sync()
        '''
    fix = "read it after the loop or in {}.add_step_closure"
    assert messages(step.format(imports=""), "XLA501") == [
        "loss.item() syncs the device every step; " + fix.format("torch_xla.core.xla_model")]
    assert messages(step.format(imports="from torch_xla.core import xla_model"), "XLA501") == [
        "loss.item() syncs the device every step; " + fix.format("xla_model")]
    assert messages(step.format(imports="import torch_xla.core.xla_model as xm"), "XLA501") == [
        "loss.item() syncs the device every step; " + fix.format("xm")]


def test_a_counter_of_an_outer_loop_or_reset_each_step_gates_no_once():
    """``epoch == 0`` holds for every step of the first epoch; a counter reset inside the
    loop is 1 on every step: both reads stay XLA501."""
    assert lint('''\
        import torch_xla.core.xla_model as xm
        import torch_xla.distributed.parallel_loader as pl


        def train(model, loss_fn, opt, loader, device, epochs):
            for epoch in range(epochs):
                for x, y in pl.MpDeviceLoader(loader, device):
                    n = 0
                    loss = loss_fn(model(x), y)
                    loss.backward()
                    xm.optimizer_step(opt)
                    n += 1
                    if epoch == 0:
                        print(loss.item())
                    if n == 1:
                        print(loss.item())
        ''', "XLA5") == {(14, 23, "XLA501"), (16, 23, "XLA501")}


# -------------------------------------------------------------- 6. XLA302: accumulation batches through a helper

def test_an_accumulation_loop_over_micro_batches_a_helper_draws_from_a_device_loader():
    """The inner loop iterates what a helper returns, a list it fills with ``next(it)`` of an
    iterator it is handed (``iter(MpDeviceLoader(...))``): the loop that steps draws from
    something that may sync once per step, so the accumulation loop is synced (issue 29,
    section 2 item 6). Both spellings were XLA302 before."""
    assert lint('''\
        import torch_xla
        import torch_xla.distributed.parallel_loader as pl


        def get_micro_batches(it, n):
            return [next(it) for _ in range(n)]


        def collect(it, n):
            out = []
            for _ in range(n):
                out.append(next(it))
            return out


        def train(model, loader, optimizer, steps, accum):
            it = iter(pl.MpDeviceLoader(loader, torch_xla.device()))
            for step in range(steps):
                for x, y in get_micro_batches(it, accum):
                    model(x, y).backward()
                optimizer.step()
                for x, y in collect(it, accum):
                    model(x, y).backward()
                optimizer.step()
        ''', "XLA302") == set()


def test_micro_batches_through_a_method_or_a_name_bound_before_the_loop():
    """The same draw through a method (``self.micro(accum)`` over ``self.it``) and through a
    name bound in the stepping loop's body (``batches = fetch(it, accum)``, a ``while``
    loop filling the list): synced once per step, not XLA302 (both were before)."""
    assert lint('''\
        import torch_xla
        import torch_xla.distributed.parallel_loader as pl


        class Trainer:
            def __init__(self, model, loader, optimizer):
                self.model = model
                self.optimizer = optimizer
                self.it = iter(pl.MpDeviceLoader(loader, torch_xla.device()))

            def micro(self, n):
                return [next(self.it) for _ in range(n)]

            def fit(self, steps, accum):
                for step in range(steps):
                    for x, y in self.micro(accum):
                        self.model(x, y).backward()
                    self.optimizer.step()


        def fetch(it, n):
            out = []
            while len(out) < n:
                out.append(next(it))
            return out


        def train(model, loader, optimizer, steps, accum):
            it = iter(pl.MpDeviceLoader(loader, torch_xla.device()))
            step = 0
            while step < steps:
                batches = fetch(it, accum)
                for x, y in batches:
                    model(x, y).backward()
                optimizer.step()
                step += 1
        ''', "XLA302") == set()


def test_an_accumulation_loop_over_micro_batches_of_host_data_still_grows():
    """The same helper over an iterator of host tensors the loop can see, and an
    accumulation loop over device tensors with nothing that syncs: XLA302 stays."""
    assert lint('''\
        import torch
        import torch_xla


        def get_micro_batches(it, n):
            return [next(it) for _ in range(n)]


        def train(model, optimizer, steps, accum):
            device = torch_xla.device()
            data = [(torch.randn(4, 8), torch.randn(4)) for _ in range(1000)]
            it = iter(data)
            for step in range(steps):
                for x, y in get_micro_batches(it, accum):
                    model(x.to(device), y.to(device)).backward()
                optimizer.step()


        def train_synthetic(model, optimizer, steps, accum):
            x = torch.randn(4, 8, device=torch_xla.device())
            for step in range(steps):
                for _ in range(accum):
                    model(x).sum().backward()
                optimizer.step()
        ''', "XLA302") == {(14, 9, "XLA302"), (22, 9, "XLA302")}
