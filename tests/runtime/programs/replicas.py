"""Two replicas on the CPU client (issue 30 section 2): the rules whose failure needs replicas.

With ``CPU_NUM_DEVICES=2`` and ``PJRT_DEVICE=CPU``, ``torch_xla.launch(fn)`` starts one spawned
process that runs ``fn`` once per device, in two threads (torch_xla 2.9
``_internal/pjrt.py``: ``run_multiprocess`` starts one process on the CPU client,
``_run_thread_per_device`` one thread per device); ``xr.world_size()`` is 2 and the replicas'
collectives run through XLA's in-process collectives. ``FLAKE8_XLA_RUNTIME_CASE`` picks the group:

- ``train``: XLA201 (no reduction), XLA205 (per-rank seed), XLA203 (clip before the reduction),
  XLA602 (a master-only save under a rank test);
- ``ddp``: XLA108 (DDP's reduction, then ``xm.optimizer_step``'s);
- ``rendezvous``: XLA506 (a rendezvous only replica 0 reaches: XLA ends the process).

The replicas are threads of one process, so state Python keeps per process is shared between
them: the global CPU generator (a per-rank seed and the model it builds are taken under one
lock, as two processes would each have their own) and torch.distributed's default group (the
DDP replicas each get their own ``ProcessGroupXla``, the object ``init_process_group("xla")``
builds). Before every sync that runs a collective the two replicas meet at a Python barrier, so
neither reaches XLA's rendezvous long before the other (XLA ends the process when one waits too
long, see tests/runtime/test_rule_evidence.py).

Each replica prints ``STEP1 <ordinal>`` once its first collective has run: the test retries a
run that died before that line (a late replica on a loaded machine), never one that died after.
"""
import datetime
import os
import sys
import threading
import time
import traceback

import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr

from _harness import outcome, report

WORLD = 2
#: one per spawned process: the two replica threads share them
SHARED = {}
LOCK = threading.Lock()
SYNC_LOCK = threading.Lock()
BARRIER = threading.Barrier(WORLD, timeout=float(os.environ.get("FLAKE8_XLA_BARRIER_TIMEOUT", "300")))


def together():
    """Both replicas reach this point before either goes on."""
    BARRIER.wait()


def gather(key, value):
    """Every replica's ``value`` for ``key``, by ordinal (a Python exchange: the threads share memory)."""
    with LOCK:
        SHARED.setdefault(key, {})[xr.global_ordinal()] = value
    together()
    return [SHARED[key][i] for i in range(WORLD)]


def in_turn(fn):
    """Run ``fn`` (which compiles and starts a graph holding a collective) one replica after the
    other, and return its value. Two replicas compiling the same graph at once get two
    executables whose collectives carry different op ids (``op_id=0`` and ``op_id=1`` in XLA's
    rendezvous key): each waits for a partner that never comes and XLA ends the process after
    10 seconds. Taken in turn, the second replica finds the first one's executable in the
    compile cache, and the two meet. (The graphs must be the same on both replicas: a value
    that differs per replica goes to the device as data, never as a Python number, which would
    be a constant of the graph.)"""
    together()
    with SYNC_LOCK:
        return fn()


def sync():
    """Run the pending graph of this replica with the other's (a collective in it needs both).
    Never ``xm.wait_device_ops()`` here: it holds every device while it waits, so the other
    replica could not start the graph this one waits for (reading a tensor waits for it)."""
    in_turn(torch_xla.sync)


def weights(model):
    return [round(v, 6) for p in model.parameters() for v in p.detach().cpu().flatten().tolist()]


def spread(values):
    """The largest difference between the replicas' lists of numbers (0.0: equal)."""
    first, second = values
    return round(max(abs(a - b) for a, b in zip(first, second)), 6)


def first_step(tag):
    """The replicas' first collective: each adds its ordinal + 1; prints ``STEP1 <ordinal>``
    and reports what each replica saw under ``replicas:<tag>``."""
    dev = torch_xla.device()
    summed = xm.all_reduce(xm.REDUCE_SUM, torch.tensor([xr.global_ordinal() + 1.0]).to(dev))
    sync()
    total = summed.cpu().item()
    sys.stdout.write(f"STEP1 {xr.global_ordinal()}\n")
    sys.stdout.flush()
    seen = gather("replicas", {"world_size": xr.world_size(), "ordinal": xr.global_ordinal(),
                               "device": str(dev), "all_reduce_sum": total})
    if xr.global_ordinal() == 0:
        report(f"replicas:{tag}", seen=seen)


def shard(ordinal, rows=8):
    """This replica's own batch: different data on each replica."""
    g = torch.Generator().manual_seed(100 + ordinal)
    return torch.randn(rows, 4, generator=g), torch.randn(rows, 1, generator=g)


def fixed_model():
    """The same initial weights on every replica, without the shared global generator."""
    model = torch.nn.Linear(4, 1)
    with torch.no_grad():
        model.weight.copy_(torch.linspace(-1.0, 1.0, 4).view(1, 4))
        model.bias.zero_()
    return model


def train(model, step, steps=3):
    """``steps`` SGD steps on this replica's shard; ``step(opt)`` is the optimizer step."""
    dev = torch_xla.device()
    x, y = (t.to(dev) for t in shard(xr.global_ordinal()))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(steps):
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        step(opt)
        sync()
    return weights(model)


# --- train: XLA201, XLA205, XLA203, XLA602 ----------------------------------------------------

def case_201():
    dev = torch_xla.device()
    bad = gather("201_bad", train(fixed_model().to(dev), lambda opt: opt.step()))
    good = gather("201_good", train(fixed_model().to(dev), xm.optimizer_step))
    if xr.global_ordinal() == 0:
        report("XLA201", steps=3, bad_spread=spread(bad), good_spread=spread(good))


def seeded_model(seed):
    with LOCK:  # the threads share the global generator: seed and build as one process would
        torch.manual_seed(seed)
        model = torch.nn.Linear(4, 1)
    return model.to(torch_xla.device())


def case_205():
    ordinal = xr.global_ordinal()
    bad_model = seeded_model(1337 + ordinal)
    bad_start = gather("205_bad_start", weights(bad_model))
    bad_end = gather("205_bad_end", train(bad_model, xm.optimizer_step))
    good_model = seeded_model(1337 + ordinal)
    in_turn(lambda: xm.broadcast_master_param(good_model))  # it syncs
    good_start = gather("205_good_start", weights(good_model))
    good_end = gather("205_good_end", train(good_model, xm.optimizer_step))
    if ordinal == 0:
        report("XLA205", steps=3, bad_start_spread=spread(bad_start), bad_end_spread=spread(bad_end),
               good_start_spread=spread(good_start), good_end_spread=spread(good_end))


def clipped_step(reduce_first):
    """One SGD step (lr 1) of a 2-weight model from 0 whose gradient is this replica's input:
    (6, 8) on replica 0 (norm 10), (0.06, 0.08) on replica 1 (norm 0.1), clipped to norm 1."""
    dev = torch_xla.device()
    model = torch.nn.Linear(2, 1, bias=False)
    with torch.no_grad():
        model.weight.zero_()
    model = model.to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=1.0)
    scale = 1.0 if xr.global_ordinal() == 0 else 0.01
    model((torch.tensor([[6.0, 8.0]]) * scale).to(dev)).sum().backward()
    if reduce_first:
        xm.reduce_gradients(opt)
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
    else:
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        xm.optimizer_step(opt)
    sync()
    moved = model.weight.detach().cpu().norm().item()
    return {"clip_norm": round(norm.cpu().item(), 4), "moved": round(moved, 4), "weights": weights(model)}


def case_203():
    bad = gather("203_bad", clipped_step(reduce_first=False))
    good = gather("203_good", clipped_step(reduce_first=True))
    if xr.global_ordinal() == 0:
        report("XLA203", bad=bad, good=good)


WRITES = []


def _counting_save(real):
    def save(obj, f, *args, **kwargs):
        with LOCK:
            WRITES.append([xr.global_ordinal(), os.path.basename(str(f))])
        return real(obj, f, *args, **kwargs)
    return save


torch.save = _counting_save(torch.save)  # xm.save writes through torch.save


def case_602(folder):
    model = fixed_model().to(torch_xla.device())
    if xm.is_master_ordinal():
        xm.save(model.state_dict(), os.path.join(folder, "guarded.pt"))
    together()
    xm.save(model.state_dict(), os.path.join(folder, "every_replica.pt"))
    together()
    if xr.global_ordinal() == 0:
        writes = sorted(WRITES)
        report("XLA602", bad=[w for w in writes if w[1] == "guarded.pt"],
               good=[w for w in writes if w[1] == "every_replica.pt"],
               same_file=torch.load(os.path.join(folder, "guarded.pt"))["weight"].tolist()
               == torch.load(os.path.join(folder, "every_replica.pt"))["weight"].tolist())


def run_train(_index, folder):
    first_step("train")
    case_201()
    case_205()
    case_203()
    case_602(folder)


# --- ddp: XLA108 ------------------------------------------------------------------------------

def ddp_step(xm_step):
    """One step of a model wrapped in DDP (a process group of this replica's own: the default
    group is one per process), stepped by ``xm.optimizer_step(opt)`` or ``opt.step()``."""
    from torch.nn.parallel import DistributedDataParallel as DDP
    from torch_xla.distributed.xla_backend import ProcessGroupXla

    dev = torch_xla.device()
    group = ProcessGroupXla(None, xr.global_ordinal(), WORLD, datetime.timedelta(seconds=300))
    group._set_group_name(f"replica{xr.global_ordinal()}")
    # init_sync=False: DDP's start-up collectives sync inside, where in_turn cannot reach
    model = DDP(fixed_model().to(dev), process_group=group, init_sync=False)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = (t.to(dev) for t in shard(xr.global_ordinal()))
    torch.nn.functional.mse_loss(model(x), y).backward()
    if xm_step:
        xm.optimizer_step(opt)
    else:
        opt.step()
    sync()
    return weights(model)


def run_ddp(_index, _folder):
    first_step("ddp")
    good = gather("108_good", outcome(lambda: ddp_step(xm_step=False)))
    bad = gather("108_bad", outcome(lambda: ddp_step(xm_step=True)))
    if xr.global_ordinal() == 0:
        report("XLA108", bad=bad, good=good)


# --- rendezvous: XLA506 -----------------------------------------------------------------------

OTHER_RETURNED = threading.Event()


def run_rendezvous(_index, _folder):
    """Replica 0 calls ``xm.rendezvous`` under a rank test; replica 1 returns from the launched
    function first (so nothing can join it), and XLA ends the process (the test reads why)."""
    first_step("rendezvous")
    if xr.global_ordinal() != 0:
        OTHER_RETURNED.set()
        return
    report("XLA506", other_replica_returned=OTHER_RETURNED.wait(120))
    xm.rendezvous("master_only")
    report("XLA506_after", returned=True)


class Replica:
    """The launched function: ``run(index, folder)``, with a replica's exception printed at
    once (the launcher reports it only after both replicas end, and a replica waiting in a
    collective for the failed one ends the process first)."""

    def __init__(self, run):
        self.run = run

    def __call__(self, index, folder):
        try:
            return self.run(index, folder)
        except BaseException:
            sys.stderr.write(f"REPLICA {xr.global_ordinal()} FAILED\n{traceback.format_exc()}")
            sys.stderr.flush()
            BARRIER.abort()
            raise


RUNS = {"train": [run_train], "ddp": [run_ddp], "rendezvous": [run_rendezvous]}


def launch(fn, folder, limit):
    """``torch_xla.launch(fn)`` under a watchdog of ``limit`` seconds: ``{"returned": ...}``,
    ``{"died": exception}`` when the launched process ended, ``{"hung": limit}`` after killing
    it when it did not return in time."""
    import multiprocessing

    result = {}

    def go():
        result.update(outcome(lambda: torch_xla.launch(Replica(fn), args=(folder,))))

    started = time.monotonic()
    thread = threading.Thread(target=go, daemon=True)
    thread.start()
    thread.join(limit)
    if thread.is_alive():
        for child in multiprocessing.active_children():
            child.kill()
        thread.join(30)
        return {"hung": limit, "seconds": round(time.monotonic() - started)}
    if "raised" in result:
        return {"died": result["raised"], "message": result["message"], "seconds": round(time.monotonic() - started)}
    return {"returned": result.get("ok"), "seconds": round(time.monotonic() - started)}


if __name__ == "__main__":
    case = os.environ["FLAKE8_XLA_RUNTIME_CASE"]
    folder = os.getcwd()
    limit = float(os.environ.get("FLAKE8_XLA_LAUNCH_LIMIT", "240"))
    ended = [launch(fn, folder, limit) for fn in RUNS[case]]
    report(f"launches:{case}", ended=ended)
    print("DONE", flush=True)
