"""One process, no launcher: removed and deprecated APIs, devices, host syncs, recompilation,
graph growth, weights that do not train, loaders. Each check uses its own layer width so that
no check finds its graphs already compiled by another."""
import os
import subprocess
import sys

import torch
import torch.utils.data as tud
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.runtime as xr

from _harness import Counted, outcome, report

dev = torch_xla.device()


def model(width, seed=0):
    torch.manual_seed(seed)
    m = torch.nn.Linear(width, 1).to(dev)
    return m, torch.optim.SGD(m.parameters(), lr=0.1)


def batch(width, n=4):
    return torch.randn(n, width).to(dev), torch.randn(n, 1).to(dev)


def step(m, opt, x, y):
    opt.zero_grad()
    loss = ((m(x) - y) ** 2).mean()
    loss.backward()
    opt.step()
    return loss


# --- XLA8xx: removed, deprecated, nonexistent APIs; XLA809 signatures ---------------------------
report("XLA801", bad=outcome(lambda: xm.xrt_world_size()), good=outcome(lambda: xr.world_size()))
report("XLA802", bad=outcome(lambda: xm.get_ordinal()), good=outcome(lambda: xr.global_ordinal()))
import torch_xla._internal.utils as xu_internal  # noqa: E402

report("XLA803", bad=outcome(lambda: xm.parse_xla_device("TPU:0")),
       alias_target=outcome(lambda: [repr(xu_internal.parse_xla_device(d)) for d in ("TPU:0", "xla:0")]),
       good=outcome(lambda: (lambda kind, _, n: [kind, int(n)])(*"TPU:0".partition(":"))))
report("XLA804", bad=outcome(lambda: str(xm.xla_device())), bad_xr=outcome(lambda: xr.xla_device()),
       good=outcome(lambda: str(torch_xla.device())))
report("XLA805", bad=outcome(lambda: xm.mark_step()), good=outcome(lambda: torch_xla.sync()))


def _import(name):
    return lambda: __import__(name) and name


def _attr(module, name):
    return lambda: repr(getattr(module, name))


import torch_xla.experimental as txe  # noqa: E402

report("XLA806", bad=outcome(_import("torch_xla.experimental.pjrt")), good=outcome(_import("torch_xla.runtime")))
report("XLA807", bad=outcome(_import("torch_xla.experimental.xla_sharding")),
       bad_tensor=outcome(_import("torch_xla.experimental.xla_sharded_tensor")),
       good=outcome(_import("torch_xla.distributed.spmd")))
report("XLA808", bad=outcome(_attr(txe, "compile")), good=outcome(lambda: callable(torch_xla.compile)))
report("XLA809", bad=outcome(lambda: xm.optimizer_step()),
       bad_keyword=outcome(lambda: xm.get_local_ordinal(defval=0)),
       good=outcome(lambda: xm.optimizer_step(torch.optim.SGD([torch.zeros(1, device=dev, requires_grad=True)], lr=0.1))))
report("XLA812", bad=outcome(lambda: xm.xla_world_size()), bad_master=outcome(lambda: xm.is_master_process()),
       good=outcome(lambda: xr.world_size()))

# --- devices --------------------------------------------------------------------------------
report("XLA401", bad=outcome(lambda: torch.ones(2).cuda()),
       good=outcome(lambda: torch.ones(2).to(torch_xla.device()).device.type))
report("XLA402", bad=outcome(lambda: str(torch_xla.device(1))),
       bad_tensor=outcome(lambda: torch.ones(2, device=torch.device("xla", 1)).cpu().tolist()),
       good=outcome(lambda: [str(d) for d in torch_xla.devices()]))
report("XLA110", bad=outcome(lambda: torch.cuda.device_count()),
       bad_sampler=outcome(lambda: len(tud.distributed.DistributedSampler(
           range(8), num_replicas=torch.cuda.device_count(), rank=0))),
       good=outcome(lambda: xr.world_size()))


def _unmoved_forward():
    return torch.nn.Linear(3, 1)(torch.ones(2, 3, device=dev)).cpu().tolist()


report("XLA404", bad=outcome(_unmoved_forward),
       good=outcome(lambda: torch.nn.Linear(3, 1).to(dev)(torch.ones(2, 3, device=dev)).cpu().shape[0]))
x = torch.ones(4, 4, device=dev)
report("XLA904", bad=outcome(lambda: [x.data_ptr(), torch.zeros(3, device=dev).data_ptr()]),
       bad_storage=outcome(lambda: x.untyped_storage().data_ptr()),
       bad_stride=outcome(lambda: list(x.t().stride())), good=outcome(lambda: x.cpu().data_ptr() != 0),
       good_stride=outcome(lambda: list(x.cpu().t().stride())))
report("XLA303", bad=outcome(lambda: len(tud.distributed.DistributedSampler(range(8)))),
       good=outcome(lambda: len(tud.distributed.DistributedSampler(
           range(8), num_replicas=xr.world_size(), rank=xr.global_ordinal()))))

# --- precision ------------------------------------------------------------------------------


def _autocast_dtype(*args, **kwargs):
    def run():
        a = torch.ones(4, 4, device=dev)
        with torch.autocast(*args, **kwargs):
            return str((a @ a).dtype)
    return run


report("XLA701", bad=outcome(_autocast_dtype("cuda", dtype=torch.float16)),
       good=outcome(_autocast_dtype("xla", dtype=torch.bfloat16)))
# docs-only rules: what makes them TPU-only (checked by test_docs_only_reason_holds)
report("XLA703", cpu_autocast=outcome(_autocast_dtype("xla", dtype=torch.float16)))
report("XLA706", cpu_float16=outcome(lambda: str((torch.ones(2, device=dev, dtype=torch.float16) * 3).cpu().dtype)))
import torch_xla.amp  # noqa: E402
import torch_xla.amp.syncfree  # noqa: E402

report("XLA702", bad=outcome(_attr(torch_xla.amp, "GradScaler")),
       good=outcome(_autocast_dtype("xla", dtype=torch.bfloat16)))

# --- host syncs, control flow, dynamic shapes, graph cuts (counted by the runtime) ----------


def _steps(width, read=None, steps=4, cut=False):
    m, opt = model(width)
    data = [batch(width) for _ in range(steps)]
    torch_xla.sync()
    with Counted() as c:
        for i, (bx, by) in enumerate(data):
            opt.zero_grad()
            loss = ((m(bx) - by) ** 2).mean()
            loss.backward()
            if cut:
                torch_xla.sync()
            opt.step()
            if read is not None:
                read(i, loss)
            torch_xla.sync()
    return c.delta


def _item(i, loss):
    loss.item()


def _if(i, loss):
    if loss > 1e9:
        print("large")


def _gated(i, loss):
    if i % 4 == 0:
        loss.item()


report("XLA501", bad=_steps(5, _item), good=_steps(6))
report("XLA502", bad=_steps(7, _if), good=_steps(8, lambda i, loss: torch.where(loss > 1e9, loss, 0 * loss)))
report("XLA507", bad=_steps(9, _gated, steps=8), every_step=_steps(10, _item, steps=8))
report("XLA505", bad=_steps(11, cut=True), good=_steps(12))


def _masks(use_mask):
    totals = []
    torch_xla.sync()
    with Counted() as c:
        for i in range(4):
            v = torch.arange(13.0 if use_mask else 14.0, device=dev)
            keep = v < (i + 2)
            totals.append(v[keep].sum() if use_mask else (v * keep).sum())
            torch_xla.sync()
    return c.delta


report("XLA503", bad=_masks(True), good=_masks(False))


def _pending_graph(width, sync):
    m, opt = model(width)
    torch_xla.sync()
    sizes = []
    for _ in range(4):
        step(m, opt, *batch(width))
        if sync:
            torch_xla.sync()
        sizes.append(len(torch_xla._XLAC._get_xla_tensors_text([m.weight]).splitlines()))
    torch_xla.sync()
    return sizes


report("XLA302", bad=_pending_graph(15, False), good=_pending_graph(15, True))


def _loader(width, n, **kwargs):
    return tud.DataLoader(tud.TensorDataset(torch.randn(n, width), torch.randn(n, 1)), batch_size=4, **kwargs)


def _plain_loader_graph(width, device_loader):
    m, opt = model(width)
    loader = _loader(width, 16)
    torch_xla.sync()
    sizes = []
    for bx, by in (pl.MpDeviceLoader(loader, dev) if device_loader else loader):
        step(m, opt, bx.to(dev), by.to(dev))
        sizes.append(len(torch_xla._XLAC._get_xla_tensors_text([m.weight]).splitlines()))
    torch_xla.sync()
    return sizes


report("XLA301", bad=_plain_loader_graph(16, False), good=_plain_loader_graph(16, True))


def _epochs(width, drop_last):
    m, opt = model(width)
    loader = _loader(width, 10, drop_last=drop_last)
    torch_xla.sync()
    with Counted() as c:
        for _ in range(2):
            for bx, by in pl.MpDeviceLoader(loader, dev):
                step(m, opt, bx, by)
    return dict(c.delta, batches=[len(b[0]) for b in loader])


report("XLA304", bad=_epochs(17, False), good=_epochs(18, True))


def _barrier(width, barrier):
    m, opt = model(width)
    loader = _loader(width, 16)
    torch_xla.sync()
    with Counted() as c:
        for bx, by in pl.MpDeviceLoader(loader, dev):
            opt.zero_grad()
            ((m(bx) - by) ** 2).mean().backward()
            xm.optimizer_step(opt, barrier=barrier)
    return c.delta


report("XLA204", bad=_barrier(19, True), good=_barrier(20, False))

loader = _loader(21, 8)
once = pl.ParallelLoader(loader, [dev]).per_device_loader(dev)
every = pl.MpDeviceLoader(loader, dev)
report("XLA306", bad=[sum(1 for _ in once) for _epoch in range(3)],
       good=[sum(1 for _ in every) for _epoch in range(3)])

# --- timing: nothing has run when the clock is read without a wait --------------------------
torch_xla.sync(wait=True)
with Counted(wait=False) as before_wait:
    a = torch.ones(64, 64, device=dev)
    for _ in range(4):
        a = a @ a / 64
with Counted() as waited:
    torch_xla.sync(wait=True)
report("XLA504", bad=before_wait.delta, good=waited.delta)

# --- weights: the optimizer built before the move, ties before the move, a double step ------


def _trains(optimizer_first):
    torch.manual_seed(0)
    m = torch.nn.Linear(22, 1)
    if optimizer_first:
        opt = torch.optim.SGD(m.parameters(), lr=0.1)
        m.to(dev)
    else:
        m.to(dev)
        opt = torch.optim.SGD(m.parameters(), lr=0.1)
    before = m.weight.detach().cpu().clone()
    for _ in range(3):
        step(m, opt, *batch(22))
        torch_xla.sync()
    return {"weight_changed": not torch.equal(before, m.weight.detach().cpu()),
            "optimizer_holds_model_weight": any(p is m.weight for g in opt.param_groups for p in g["params"])}


report("XLA405", bad=_trains(True), good=_trains(False))


class Tied(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(5, 3)
        self.out = torch.nn.Linear(3, 5, bias=False)


def _ties(tie_first):
    t = Tied()
    if tie_first:
        t.out.weight = t.emb.weight
        t.to(dev)
    else:
        t.to(dev)
        t.out.weight = t.emb.weight
    opt = torch.optim.SGD(t.parameters(), lr=0.5)
    opt.zero_grad()
    t.out(t.emb(torch.tensor([1, 2], device=dev))).sum().backward()
    opt.step()
    torch_xla.sync()
    return {"same_parameter": t.out.weight is t.emb.weight,
            "equal_after_a_step": torch.equal(t.out.weight.detach().cpu(), t.emb.weight.detach().cpu())}


report("XLA903", bad=_ties(True), good=_ties(False))


def _update_in_lr_grads(double):
    torch.manual_seed(0)
    m = torch.nn.Linear(23, 1, bias=False).to(dev)
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    before = m.weight.detach().cpu().clone()
    opt.zero_grad()
    ((m(torch.ones(2, 23, device=dev)) - 1) ** 2).mean().backward()
    grad = m.weight.grad.detach().cpu().clone()
    xm.optimizer_step(opt)
    if double:
        opt.step()
    torch_xla.sync()
    return round(float(((before - m.weight.detach().cpu()) / (0.1 * grad)).mean()), 3)


report("XLA207", bad=_update_in_lr_grads(True), good=_update_in_lr_grads(False))


def _rng(seed_fn):
    seed_fn(1)
    a = torch.randn(3, device=dev).cpu()
    seed_fn(1)
    return torch.equal(a, torch.randn(3, device=dev).cpu())


report("XLA206", bad=_rng(torch.manual_seed), good=_rng(torch_xla.manual_seed))

# --- checkpoints: torch.save keeps XLA tensors, which plain torch cannot load ---------------
m = torch.nn.Linear(24, 1).to(dev)
torch.save(m.state_dict(), "torch_save.pt")
xm.save(m.state_dict(), "xm_save.pt")
probe = ("import torch\n"
         "try:\n    print(sorted({str(v.device) for v in torch.load(%r).values()}))\n"
         "except Exception as e:\n    print(type(e).__name__, str(e).splitlines()[0][:70])\n")


def _plain_torch_load(path):
    done = subprocess.run([sys.executable, "-c", probe % path], capture_output=True, text=True, timeout=120)
    return done.stdout.strip()


report("XLA601", bad_devices=sorted({str(v.device) for v in torch.load("torch_save.pt").values()}),
       bad=_plain_torch_load("torch_save.pt"), good=_plain_torch_load("xm_save.pt"))

# --- a loop that is no step: a carried device tensor read on the host, with and without a cut ---


def _carried_reads(width, cut, carried=True, n=6):
    """``n`` iterations of ``acc = acc * 0.5 + x`` (or, not carried, a fresh ``x * 0.5``) with
    ``acc.sum().item()`` in each; ``cut``: ``torch_xla.sync()`` ends each iteration. Returns the
    counts and the IR node count of ``acc`` after each iteration (the graph a read runs)."""
    x = torch.ones(width, device=dev)
    acc = torch.zeros(width, device=dev)
    torch_xla.sync()
    sizes = []
    with Counted() as c:
        for _ in range(n):
            acc = acc * 0.5 + x if carried else x * 0.5
            acc.sum().item()
            sizes.append(torch_xla._XLAC._get_xla_tensors_text([acc]).count("\n"))
            if cut:
                torch_xla.sync()
    return dict(c.delta, ir_lines=sizes)


report("XLA508", bad=_carried_reads(34, False), good=_carried_reads(35, True),
       fresh=_carried_reads(36, False, carried=False))

# --- torch.distributed.checkpoint.save after the optimizer step, before the sync -------------


def _dist_cp_saves(width, before_save):
    """Two steps of a 4-layer model (8 tensors of state), each saved with dist_cp.save right after
    `opt.step()`; `before_save` runs between them (nothing, a wait, a sync); the sync ends the step."""
    import warnings

    import torch.distributed.checkpoint as dist_cp

    torch.manual_seed(0)
    m = torch.nn.Sequential(*[torch.nn.Linear(width, width) for _ in range(4)]).to(dev)
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    torch_xla.sync()
    with Counted() as c, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # no process group: dist_cp saves as one process
        for i in range(2):
            m(torch.randn(4, width).to(dev)).pow(2).mean().backward()
            opt.step()
            opt.zero_grad()
            before_save()
            dist_cp.save({"model": m.state_dict()}, storage_writer=dist_cp.FileSystemWriter(f"dcp_{width}_{i}"))
            torch_xla.sync()
    return c.delta


report("XLA605", bad=_dist_cp_saves(31, lambda: None), waited=_dist_cp_saves(32, xm.wait_device_ops),
       good=_dist_cp_saves(33, torch_xla.sync))

# --- the "xla" device in a process that never imports torch_xla ------------------------------
unregistered = ("import sys\nimport torch\n"
                "def run(f):\n    try:\n        return 'ok ' + str(f())\n"
                "    except Exception as e:\n        return type(e).__name__ + ' ' + str(e).splitlines()[0][:70]\n"
                "print(run(lambda: torch.ones(2).to('xla').device))\n"
                "print(run(lambda: torch.zeros(2, device='xla').device))\n"
                "print(run(lambda: torch.device('xla')))\n"
                "print('torch_xla' in sys.modules)\n")
registered = "import torch\nimport torch_xla\nprint(torch.ones(2).to('xla').device)\n"


def _python(code):
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    return done.stdout.strip().splitlines()


report("XLA406", bad=_python(unregistered), good=_python(registered))

# --- loader workers: a dataset holding an XLA tensor --------------------------------------


class HoldsDeviceState(tud.Dataset):
    def __init__(self):
        self.table = torch.ones(3, device=dev)

    def __len__(self):
        return 4

    def __getitem__(self, i):
        return torch.full((2,), float(i))


def _load(**kwargs):
    return lambda: len(list(tud.DataLoader(HoldsDeviceState(), batch_size=2, **kwargs)))


report("XLA305", bad=outcome(_load(num_workers=1, multiprocessing_context="spawn")), good=outcome(_load(num_workers=0)))

# --- torch.compile: the default backend against XLA tensors -------------------------------


def _compiled(**kwargs):
    def run():
        return float(torch.compile(lambda t: (t @ t).sum(), **kwargs)(torch.ones(8, 8, device=dev)).cpu())
    return run


report("XLA403", bad=outcome(_compiled()), good=outcome(_compiled(backend="openxla")))

# --- a scan function that reads a tensor it is not passed -----------------------------------
from torch_xla.experimental.scan import scan  # noqa: E402


def _scan(captured):
    w = torch.ones(4, device=dev)
    init, xs = torch.zeros(2, 4, device=dev), torch.ones(3, 2, 4, device=dev)

    def run():
        if captured:
            carry, _ = scan(lambda h, x: (h * w + x, h), init, xs)
        else:
            (carry, _), _ = scan(lambda c, x: ((c[0] * c[1] + x, c[1]), c[0]), (init, w), xs)
        return carry.cpu().tolist()[0]
    return run


report("XLA911", bad=outcome(_scan(True)), good=outcome(_scan(False)))

# --- the compilation cache, once computations ran (the good shape is in spmd.py) -----------
report("XLA901", bad=outcome(lambda: xr.initialize_cache(os.path.abspath("cache"), readonly=False)))
print("DONE", flush=True)
