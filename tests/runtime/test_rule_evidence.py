"""Rule evidence (issue 21 §1, issue 30 §2): what torch_xla 2.9 itself reports, on the CPU
client, for the bad shape and the good shape of every rule whose failure the CPU client can show:
with one replica, or with two (``CPU_NUM_DEVICES=2``: ``torch_xla.launch`` runs the function on
xla:0 and xla:1, two threads of one process; ``programs/replicas.py``).

The programs under ``programs/`` run once per session (each prints one ``CHECK {json}`` line per
rule code); each rule's test asserts the runtime's own values (exception type and message,
warning category, counters from ``torch_xla.debug.metrics``, weights) and words them as one
sentence. ``flake8_xla/data/runtime_results.json`` holds those sentences (``seen``) and, for
the rules the CPU client cannot show, why (``docs_only``, from :data:`DOCS_ONLY`); docgen puts
them on every rule page. ``test_results_file_is_current`` fails with the diff when the run and
the file differ; ``FLAKE8_XLA_WRITE_RUNTIME_RESULTS=1`` rewrites the file from the run (then
run ``python -m flake8_xla.docgen``).

Two replicas on a loaded machine: XLA's CPU collectives wait 10 seconds for the other replica
and then end the process ("Termination timeout ... of 10 seconds exceeded"); torch_xla 2.9 has
no setting for that wait (its ``DIST_SERVICE_*`` timeouts are the coordination service's, which
the CPU client does not start; ``ProcessGroupXla`` ignores its ``timeout``; the XLA flags for
collective timeouts are ``xla_gpu_*`` ones). The program therefore compiles each graph holding
a collective one replica at a time (``replicas.py`` ``in_turn``: two concurrent compiles of one
graph give collectives that never meet, the cause of the deaths seen before), and a run whose
replicas did not both finish their first collective is run again, at most twice
(:func:`with_retries`; ``test_two_replicas_are_two`` warns that it was, with the reason).
"""
from __future__ import annotations

import difflib
import json
import os
import re
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace

import pytest

from flake8_xla.docgen import RUNTIME_RESULTS_JSON, runtime_results_json
from flake8_xla.registry import all_rules

pytestmark = pytest.mark.runtime

PROGRAMS_DIR = Path(__file__).resolve().parent / "programs"
WRITE_ENV = "FLAKE8_XLA_WRITE_RUNTIME_RESULTS"

#: run name -> (program file, extra environment). env.py runs once per variable set.
PROGRAMS = {
    "core": ("core.py", {}),
    "dist": ("dist.py", {}),
    "launch": ("launch.py", {}),
    "spmd": ("spmd.py", {"CPU_NUM_DEVICES": "4"}),
    "late_spmd": ("late_spmd.py", {}),
    "env_bf16": ("env.py", {"FLAKE8_XLA_RUNTIME_CASE": "XLA705", "XLA_USE_BF16": "1"}),
    "env_typo": ("env.py", {"FLAKE8_XLA_RUNTIME_CASE": "XLA813", "XLA_USE_BF61": "1"}),
    "env_xrt": ("env.py", {"FLAKE8_XLA_RUNTIME_CASE": "XLA810", "XRT_TPU_CONFIG": "localservice;0;localhost:51011"}),
    "env_spmd": ("env.py", {"FLAKE8_XLA_RUNTIME_CASE": "XLA811", "XLA_USE_SPMD": "1"}),
    # two replicas (issue 30): torch_xla.launch runs the function on each of 2 CPU devices
    "replicas_train": ("replicas.py", {"CPU_NUM_DEVICES": "2", "FLAKE8_XLA_RUNTIME_CASE": "train"}),
    "replicas_ddp": ("replicas.py", {"CPU_NUM_DEVICES": "2", "FLAKE8_XLA_RUNTIME_CASE": "ddp"}),
    "replicas_rendezvous": ("replicas.py", {"CPU_NUM_DEVICES": "2", "FLAKE8_XLA_RUNTIME_CASE": "rendezvous"}),
}
#: the one program expected to die: xr.use_spmd() after the runtime started (SIGSEGV on 2.9)
MAY_CRASH = {"late_spmd"}
#: the two-replica programs: each replica prints ``STEP1 <ordinal>`` once its first collective
#: ran; a run without that line died before its first step and is run again, at most twice
TWO_REPLICAS = {name for name, (program, _) in PROGRAMS.items() if program == "replicas.py"}
RETRIES = 2
#: the launches each two-replica program expects to end by dying (XLA ends the process)
EXPECTED_DEATHS = {"replicas_rendezvous": 1}

#: rules the CPU client cannot show, and why (on the rule's page as "Shown by the docs and source only")
DOCS_ONLY = {
    "XLA101": "on 2.9 the flag is a memory recommendation (required up to 2.5; DDP without it runs on one CPU "
              "replica), and the saving is device memory per gradient bucket, which the CPU client does not measure.",
    "XLA105": "a failure of torch_xla 2.0-2.4; on 2.9 `import torch_xla` registers the `xla` backend (the XLA104 "
              "program sets up an `xla` group with no `xla_backend` import).",
    "XLA202": "XLA FSDP shards gradients across replicas: one replica holds every shard, and the CPU client's two "
              "replicas (threads of one process) have not been run with XLA FSDP yet.",
    "XLA603": "XLA FSDP shards the state across replicas: one replica's shard is the whole model, and the CPU "
              "client's two replicas (threads of one process) have not been run with XLA FSDP yet.",
    "XLA604": "`is_master_ordinal(local=True)` and `local=False` differ only with more than one host.",
    "XLA703": "the bfloat16-only check is made for TPU devices: the CPU device runs "
              "`torch.autocast(\"xla\", dtype=torch.float16)` in float16.",
    "XLA704": "a 2.0-2.8 rule: 2.9 has no `torch_xla.amp.GradScaler` (XLA702's runtime line).",
    "XLA706": "TPU numerics: the CPU device computes float16 natively; the failures are the TPU compiler's.",
    "XLA907": "needs several hosts: on one host the host-local batch is the global batch.",
}

#: docs-only code -> a check that the runtime agrees with the reason given (where one replica can check it)
DOCS_ONLY_FACTS = {
    "XLA101": lambda o: ran(o["without_flag"]) == [2, 1],  # DDP without the flag runs on 2.9
    "XLA105": lambda o: o["good"] == {"ok": "xla", "warnings": []},  # on XLA104's record: no xla_backend import
    "XLA703": lambda o: ran(o["cpu_autocast"]) == "torch.float16",
    "XLA706": lambda o: ran(o["cpu_float16"]) == "torch.float16",
}
#: where a fact's observation is recorded, when not under its own code
FACT_SOURCE = {"XLA105": "XLA104"}

EVIDENCE = {}


TWO = "on two replicas (`CPU_NUM_DEVICES=2`, `torch_xla.launch`), "


def evidence(code):
    """Register ``fn(observed) -> sentence`` for ``code``: it asserts what the runtime reported."""
    def register(fn):
        EVIDENCE[code] = fn
        return fn
    return register


def raised(outcome, kind, fragment=""):
    assert outcome.get("raised") == kind, outcome
    assert fragment in outcome["message"], outcome
    return outcome["message"]


def ran(outcome):
    assert "raised" not in outcome, outcome
    return outcome["ok"]


def silent(outcome):
    assert outcome["warnings"] == [], outcome
    return ran(outcome)


@pytest.fixture(scope="session")
def runs(run_source_in, tmp_path_factory):
    """Run name -> its :class:`Ran`; the programs run once per session, two at a time."""
    files = {p.name: p.read_text(encoding="utf-8") for p in PROGRAMS_DIR.glob("*.py")}
    # the directories are made here, not in the threads (tmp_path_factory is not thread-safe)
    where = {name: tmp_path_factory.mktemp(name) for name in PROGRAMS}

    def one(name):
        program, env = PROGRAMS[name]

        def run():
            return run_source_in(where[name], files[program], env=env, files=files, name=program, timeout=600)

        if name not in TWO_REPLICAS:
            return name, run()
        done, RETRIED[name] = with_retries(run)
        return name, done

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(pool.map(one, PROGRAMS))


#: two-replica run name -> why each try that was run again died (filled by ``runs``)
RETRIED: dict[str, list[str]] = {}


def with_retries(run, retries=RETRIES):
    """``run()`` once, and again (at most ``retries`` more times) while the run died before its
    first step; returns the last run and why each earlier one died (empty when none was retried).
    A run that died after its first step is never run again: its death is evidence."""
    done, died = run(), []
    while not first_step_ran(done) and len(died) < retries:
        died.append(why_it_died(done))
        done = run()
    return done, died


def first_step_ran(done):
    """Both replicas of a two-replica run printed ``STEP1``: their first collective ran."""
    return {line for line in done.stdout.splitlines() if line.startswith("STEP1 ")} == {"STEP1 0", "STEP1 1"}


def why_it_died(done):
    """The runtime's own last word on a run (XLA's termination line when there is one)."""
    lines = [line for line in done.stderr.splitlines() if line.strip() and not line.startswith(" ")]
    fatal = [line for line in lines if "Termination timeout" in line]
    return ((fatal or lines or [f"exit {done.returncode}, no output"])[-1])[:300]


@pytest.fixture(scope="session")
def observed(runs):
    """Rule code -> what its checks reported (the fields of its CHECK lines, merged over programs)."""
    out: dict[str, dict] = {}
    for name, done in runs.items():
        for line in done.stdout.splitlines():
            if line.startswith("CHECK "):
                record = json.loads(line[len("CHECK "):])
                code = record.pop("code")
                clash = set(record) & set(out.get(code, {}))
                assert not clash, f"{code}: {clash} reported twice"
                out.setdefault(code, {}).update(record)
    out.setdefault("XLA906", {})["bad_returncode"] = runs["late_spmd"].returncode
    out.setdefault("XLA506", {})["termination"] = termination(runs["replicas_rendezvous"].stderr)
    out.setdefault("XLA705", {})["printed"] = [
        line for line in runs["env_bf16"].stdout.splitlines() if line.startswith("XLA_USE_BF16")]
    return out


def termination(stderr):
    """XLA's rendezvous giving up, from a run's stderr: ``[collective, seconds, arrived, expected]``
    ("Termination timeout for `all reduce RendezvousKey{...}` of 10 seconds exceeded ... Expected
    2 threads to join the rendezvous, but only 1 of them arrived on time"), or None."""
    found = re.search(r"Termination timeout for `(all[ -]\w+) RendezvousKey.*?` of (\d+) seconds exceeded.*?"
                      r"Expected (\d+) threads to join the rendezvous, but only (\d+) of them arrived", stderr)
    return None if found is None else [found[1], int(found[2]), int(found[4]), int(found[3])]


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_ran_to_the_end(runs, observed, name):
    done = runs[name]
    if name in MAY_CRASH:
        assert "CHECK " in done.stdout, done.stderr[-3000:]
        return
    assert done.returncode == 0 and "DONE" in done.stdout.splitlines(), done.stderr[-3000:]
    if name in TWO_REPLICAS:  # every launch returned, but those expected to die
        ended = observed[f"launches:{PROGRAMS[name][1]['FLAKE8_XLA_RUNTIME_CASE']}"]["ended"]
        assert sum("died" in e for e in ended) == EXPECTED_DEATHS.get(name, 0), (ended, done.stderr[-3000:])
        assert not any("hung" in e for e in ended), ended


def _fake(returncode, stdout, stderr=""):
    return SimpleNamespace(returncode=returncode, stdout=stdout, stderr=stderr)


@pytest.mark.parametrize("sequence, calls, retried", [
    (["ok"], 1, 0),
    (["died", "ok"], 2, 1),
    (["died", "died", "ok"], 3, 2),
    (["died", "died", "died", "ok"], 3, 2),  # at most twice: the third death stands
    (["late"], 1, 0),  # died after its first step: evidence, never retried
])
def test_a_run_is_retried_only_when_it_died_before_its_first_step(sequence, calls, retried):
    crash = ("E rendezvous.cc] waiting\nF rendezvous.cc] Termination timeout for `x`\n"
             "Traceback (most recent call last):\n  File ...\nBrokenProcessPool: ...\n")
    runs = {"ok": _fake(0, "STEP1 0\nSTEP1 1\nDONE\n"),
            "died": _fake(0, "DONE\n", crash),
            "late": _fake(0, "STEP1 1\nSTEP1 0\nDONE\n", "F rendezvous.cc] Termination timeout for `y`\n")}
    made = iter(sequence)
    done, died = with_retries(lambda: runs[next(made)])
    assert len(died) == retried and done == runs[sequence[calls - 1]]
    assert died == ["F rendezvous.cc] Termination timeout for `x`"] * retried


@pytest.mark.parametrize("name", sorted(TWO_REPLICAS))
def test_two_replicas_are_two(runs, observed, name):
    """``CPU_NUM_DEVICES=2``: ``torch_xla.launch`` ran the function on xla:0 and xla:1, each saw
    ``xr.world_size()`` 2 and its own ordinal, and ``xm.all_reduce`` summed 1 + 2 on both. A run
    that died before that first step was run again (at most twice): said here as a warning."""
    for why in RETRIED.get(name, []):
        warnings.warn(f"{name}: died before its first step and was run again: {why}", stacklevel=1)
    assert first_step_ran(runs[name]), f"{name} died before its first step in {1 + RETRIES} tries: " \
        f"{RETRIED.get(name)}; last: {why_it_died(runs[name])}"
    seen = observed[f"replicas:{PROGRAMS[name][1]['FLAKE8_XLA_RUNTIME_CASE']}"]["seen"]
    assert seen == [{"all_reduce_sum": 3.0, "device": f"xla:{i}", "ordinal": i, "world_size": 2} for i in (0, 1)]


def test_results_file_is_current(observed):
    """The committed results file is what this run observed (set FLAKE8_XLA_WRITE_RUNTIME_RESULTS=1 to rewrite)."""
    results = {code: {"docs_only": why} for code, why in DOCS_ONLY.items()}
    for code, fn in EVIDENCE.items():
        try:
            results[code] = {"seen": fn(observed.get(code, {}))}
        except (AssertionError, KeyError) as exc:  # reported by test_rule_evidence too
            results[code] = {"failed": f"{type(exc).__name__}: {exc}"[:300]}
    text = runtime_results_json(results)
    if os.environ.get(WRITE_ENV) == "1":
        RUNTIME_RESULTS_JSON.write_text(text, encoding="utf-8")
    current = RUNTIME_RESULTS_JSON.read_text(encoding="utf-8") if RUNTIME_RESULTS_JSON.exists() else ""
    diff = "".join(difflib.unified_diff(current.splitlines(True), text.splitlines(True),
                                        str(RUNTIME_RESULTS_JSON), "this run"))
    assert not diff, f"the runtime results changed ({WRITE_ENV}=1 rewrites the file, then run " \
                     f"python -m flake8_xla.docgen):\n{diff}"


def _first(text, limit=90):
    text = text.split(". ")[0].split(", please")[0].rstrip(".")
    return text if len(text) <= limit else text[:limit - 3].rstrip() + "..."


# --- XLA0: launch -----------------------------------------------------------------------------

@evidence("XLA001")
def _(o):
    msg = raised(o["bad"], "ValueError", "Unsupported nprocs (8)")
    assert ran(o["good"]) is None
    return f'`xmp.spawn(fn, nprocs=8)` raised ValueError: "{_first(msg)}"; `torch_xla.launch(fn)` ran the function.'


@evidence("XLA002")
def _(o):
    replicas = o["bad_replicas"]
    assert ran(o["bad"]) is None and len(replicas) == 2
    assert {(r["world_size"], r["global_ordinal"]) for r in replicas} == {(1, 0)}
    return ("`torch.multiprocessing.spawn(fn, nprocs=2)` started 2 processes that each reported `xr.world_size()` 1 "
            "and `xr.global_ordinal()` 0: two runtimes, each replica 0 of 1.")


@evidence("XLA003")
def _(o):
    msg = raised(o["bad"], "RuntimeError", "Runtime is already initialized")
    assert ran(o["good"]) is None
    return f'after a tensor was put on the device, `torch_xla.launch(fn)` raised RuntimeError: "{msg}".'


@evidence("XLA004")
def _(o):
    msg = raised(o["bad"], "NotImplementedError", "does not support SPMD")
    return f'after `xr.use_spmd()`, `torch_xla.launch(fn)` raised NotImplementedError: "{msg}".'


@evidence("XLA005")
def _(o):
    assert ran(o["bad"]) == "[b'']" and ran(o["bad_mesh_reduce"]) == 3.0
    msg = raised(o["bad_barrier"], "ValueError", "Default process group has not been initialized")
    return ("after `torch_xla.launch(fn)` returned, the parent's `xm.rendezvous(\"done\")` returned `[b'']` (its own "
            "payload only), `xm.mesh_reduce(\"acc\", 3.0, sum)` returned 3.0 (its own value only) and "
            f'`dist.barrier()` raised ValueError: "{_first(msg, 60)}".')


# --- XLA1: torch.distributed and DDP ----------------------------------------------------------

@evidence("XLA102")
def _(o):
    msg = raised(o["bad"], "TypeError")
    assert ran(o["bad_rank0"]) == [2, 1] and ran(o["good"]) == [2, 1]
    return (f"`DDP(model, device_ids=[1])` in a process whose device is xla:0 failed at its first forward with "
            f'TypeError: "{msg}"; without `device_ids` (and with `[0]`, rank 0\'s value) it ran.')


@evidence("XLA103")
def _(o):
    nccl = raised(o["bad"], "ValueError", "NCCL")
    gloo = raised(o["bad_gloo"], "RuntimeError", "ProcessGroupGloo::allgather: invalid tensor type")
    assert ran(o["good"]) == [1.0, 1.0]
    return (f'`init_process_group("nccl", ...)` raised ValueError: "{nccl}", and a gloo group\'s `all_gather` of an '
            f'XLA tensor raised RuntimeError: "{_first(gloo, 60)}"; the `xla` group gathered it.')


@evidence("XLA104")
def _(o):
    msg = raised(o["bad"], "ValueError", "env:// rendezvous")
    assert ran(o["good"]) == "xla"
    return (f'`init_process_group("xla")` without `init_method` raised ValueError: "{msg}"; with '
            '`init_method="xla://"` it set up the `xla` group.')


@evidence("XLA106")
def _(o):
    msg = raised(o["bad"], "RuntimeError", "pjrt://")
    assert ran(o["good"]) == "xla"
    return f'`init_method="pjrt://"` raised RuntimeError: "{msg}"; `init_method="xla://"` set up the group.'


@evidence("XLA107")
def _(o):
    msg = raised(o["bad"], "AssertionError", "not supported with SPMD")
    assert ran(o["good"]) == "gloo"
    return (f'under SPMD, `init_process_group("xla", init_method="xla://")` raised AssertionError: "{msg}"; '
            '`"gloo"` with `init_method="xla://"` set up.')


@evidence("XLA108")
def _(o):
    for replica in o["bad"]:
        msg = raised(replica, "ValueError", "mix of layout constrained and unconstrained AllReduce")
    first, second = (ran(r) for r in o["good"])
    assert first == second
    msg = msg.split("]: ")[-1].rstrip(".")
    return (f"{TWO}a step of a DDP model by `xm.optimizer_step(opt)` failed to compile on both replicas with "
            f'ValueError: "{msg}" (DDP\'s all-reduce and the step\'s in one graph); by `opt.step()` it ran and '
            "the replicas' weights were equal.")


@evidence("XLA109")
def _(o):
    (replica,) = o["replicas"]
    assert replica["env_set"] == [] and (replica["world_size"], replica["global_ordinal"]) == (1, 0)
    raised(replica["env_rank"], "KeyError", "RANK")
    return ("in a function started by `torch_xla.launch`, `RANK`, `WORLD_SIZE` and `LOCAL_RANK` were unset "
            "(`os.environ[\"RANK\"]` raised KeyError) while `xr.global_ordinal()` was 0 and `xr.world_size()` 1.")


@evidence("XLA110")
def _(o):
    assert ran(o["bad"]) == 0 and ran(o["good"]) == 1
    msg = raised(o["bad_sampler"], "ValueError", "Invalid rank 0")
    return ("`torch.cuda.device_count()` was 0 on a host with no GPU (a TPU host has none) and "
            f'`DistributedSampler(ds, num_replicas=0, rank=0)` raised ValueError: "{msg}"; `xr.world_size()` was 1.')


# --- XLA2: the optimizer step -----------------------------------------------------------------

@evidence("XLA201")
def _(o):
    assert o["steps"] == 3 and o["bad_spread"] > 0.1 and o["good_spread"] == 0.0
    return (f"{TWO}3 SGD steps on each replica's own batch with `optimizer.step()` left the replicas' weights up to "
            f"{o['bad_spread']:.2f} apart; with `xm.optimizer_step(optimizer)` they stayed equal.")


@evidence("XLA203")
def _(o):
    bad, good = o["bad"], o["good"]
    assert [r["clip_norm"] for r in bad] == [10.0, 0.1] and [r["clip_norm"] for r in good] == [5.05, 5.05]
    assert bad[0]["weights"] != bad[1]["weights"]
    assert good[0]["weights"] == good[1]["weights"] and [r["moved"] for r in good] == [1.0, 1.0]
    return (f"{TWO}with gradients of norm 10 and 0.1, `clip_grad_norm_(params, 1.0)` before `xm.optimizer_step` "
            f"returned each replica's own norm (10.0, 0.1) and the replicas' weights came out different "
            f"({_pair(bad[0]['weights'])} and {_pair(bad[1]['weights'])}); after `xm.reduce_gradients` both "
            "clipped the averaged gradient (norm 5.05) and stayed equal.")


@evidence("XLA205")
def _(o):
    assert o["bad_start_spread"] > 0.1 and abs(o["bad_end_spread"] - o["bad_start_spread"]) < 1e-3
    assert o["good_start_spread"] == o["good_end_spread"] == 0.0
    return (f"{TWO}`torch.manual_seed(1337 + rank)` before building the model gave weights up to "
            f"{o['bad_start_spread']:.2f} apart, still {o['bad_end_spread']:.2f} after 3 `xm.optimizer_step` steps; "
            "with `xm.broadcast_master_param(model)` after the build they were equal.")


@evidence("XLA204")
def _(o):
    bad, good = o["bad"], o["good"]
    assert bad["syncs"] > good["syncs"]
    assert (bad["executions"], bad["compiles"]) == (good["executions"], good["compiles"]) == (4, 1)
    return (f"over 4 batches of an `MpDeviceLoader`, `xm.optimizer_step(opt, barrier=True)` made {bad['syncs']} syncs "
            f"(`MarkStep`) against {good['syncs']} without it, for the same 4 executions: the extra ones cut nothing.")


@evidence("XLA206")
def _(o):
    assert o["bad"] is False and o["good"] is True
    return ("after `torch.manual_seed(1)`, two `torch.randn(3, device=xla)` draws each preceded by it differed (the "
            "device RNG was not reseeded); after `torch_xla.manual_seed(1)` they were equal.")


@evidence("XLA207")
def _(o):
    assert (o["bad"], o["good"]) == (2.0, 1.0)
    return ("`xm.optimizer_step(opt)` followed by `opt.step()` moved an SGD weight by 2.0 x lr x grad "
            "(1.0 without the extra step).")


# --- XLA3: data loading and step sync ---------------------------------------------------------

def _pair(values):
    return "(" + ", ".join(f"{v:g}" for v in values) + ")"


def _sizes(values):
    return ", ".join(map(str, values))


@evidence("XLA301")
def _(o):
    bad, good = o["bad"], o["good"]
    assert bad == [bad[0] * k for k in (1, 2, 3, 4)] and good == [good[0]] * 4
    return (f"a training loop over a plain DataLoader with no sync grew a weight's pending graph to {_sizes(bad)} IR "
            f"lines over 4 steps; over `MpDeviceLoader` it stayed {_sizes(good)}.")


@evidence("XLA302")
def _(o):
    bad, good = o["bad"], o["good"]
    assert bad == [bad[0] * k for k in (1, 2, 3, 4)] and good == [good[0]] * 4 and good[0] < bad[0]
    return (f"a training loop with no sync grew a weight's pending graph to {_sizes(bad)} IR lines over 4 steps; "
            f"with `torch_xla.sync()` per step it stayed {_sizes(good)}.")


@evidence("XLA303")
def _(o):
    msg = raised(o["bad"], "ValueError", "Default process group has not been initialized")
    assert ran(o["good"]) == 8
    return (f'`DistributedSampler(ds)` with no process group raised ValueError: "{_first(msg, 60)}"; with '
            "`num_replicas=xr.world_size(), rank=xr.global_ordinal()` it sampled all 8 items (the duplicated data "
            "itself needs two replicas).")


@evidence("XLA304")
def _(o):
    bad, good = o["bad"], o["good"]
    assert (bad["batches"], good["batches"]) == ([4, 4, 2], [4, 4])
    assert (bad["compiles"], good["compiles"]) == (2, 1)
    return ("2 epochs over 10 samples in batches of 4 (4, 4, 2) compiled the step twice (`CompileTime`); with "
            "`drop_last=True` (4, 4) once.")


@evidence("XLA305")
def _(o):
    msg = raised(o["bad"], "RuntimeError", "only available on CPU")
    assert ran(o["good"]) == 2
    return ("a `DataLoader(num_workers=1)` (spawn) over a dataset holding an XLA tensor raised RuntimeError: "
            f'"{msg}"; with `num_workers=0` it loaded.')


@evidence("XLA306")
def _(o):
    assert (o["bad"], o["good"]) == ([2, 0, 0], [2, 2, 2])
    return ("a `ParallelLoader(...).per_device_loader(dev)` built once gave 2, 0, 0 batches in 3 epochs; "
            "`MpDeviceLoader` gave 2, 2, 2.")


# --- XLA4: devices ----------------------------------------------------------------------------

@evidence("XLA401")
def _(o):
    msg = raised(o["bad"], "RuntimeError", "NVIDIA driver")
    assert ran(o["good"]) == "xla"
    return f'`.cuda()` raised RuntimeError: "{_first(msg)}"; `.to(torch_xla.device())` moved the tensor.'


@evidence("XLA402")
def _(o):
    assert ran(o["good"]) == ["xla:0"]
    raised(o["bad"], "IndexError")
    raised(o["bad_tensor"], "RuntimeError")
    return ("a process sees one device (`torch_xla.devices()` is `[xla:0]`): `torch_xla.device(1)` raised IndexError "
            "and a tensor on `torch.device(\"xla\", 1)` raised RuntimeError.")


@evidence("XLA403")
def _(o):
    msg = raised(o["bad"], "InductorError", "LoweringException")
    assert ran(o["good"]) == 512.0
    return (f'`torch.compile(fn)` (inductor) on XLA tensors raised InductorError: "{msg.strip()}"; '
            '`backend="openxla"` computed the result.')


@evidence("XLA404")
def _(o):
    msg = raised(o["bad"], "RuntimeError", "Expected XLA tensor")
    assert ran(o["good"]) == 2
    return f'the forward of a never-moved `nn.Linear` on an XLA batch raised RuntimeError: "{msg}".'


@evidence("XLA405")
def _(o):
    assert o["bad"] == {"optimizer_holds_model_weight": False, "weight_changed": False}
    assert o["good"] == {"optimizer_holds_model_weight": True, "weight_changed": True}
    return ("an SGD optimizer built before `model.to(xla)` held none of the moved parameters and the weight did not "
            "change in 3 steps; built after the move, it changed.")


@evidence("XLA406")
def _(o):
    to, factory, device, loaded = o["bad"]
    assert to == "RuntimeError PyTorch is not linked with support for xla devices" and loaded == "False"
    assert factory.startswith("NotImplementedError Could not run 'aten::empty.memory_format'")
    assert device == "ok xla" and o["good"] == ["xla:0"]
    return ("without `import torch_xla` (`import torch` did not load it), `torch.device(\"xla\")` was built but "
            "`.to(\"xla\")` raised RuntimeError: \"PyTorch is not linked with support for xla devices\" and "
            "`torch.zeros(2, device=\"xla\")` NotImplementedError; with the import, xla:0.")


# --- XLA5: host syncs and recompilation (the runtime's counters) -------------------------------

@evidence("XLA501")
def _(o):
    bad, good = o["bad"], o["good"]
    assert (bad["transfers"], good["transfers"]) == (4, 0) and bad["executions"] == 2 * good["executions"] == 8
    return ("`loss.item()` in each of 4 steps: 4 device-to-host transfers (`TransferFromDeviceTime`) and 8 "
            "executions, against 0 and 4 without it.")


@evidence("XLA502")
def _(o):
    bad, good = o["bad"], o["good"]
    assert (bad["transfers"], good["transfers"]) == (4, 0) and bad["executions"] == 2 * good["executions"] == 8
    return ("`if loss > 1e9:` in each of 4 steps: 4 device-to-host transfers and 8 executions, against 0 and 4 with "
            "`torch.where`.")


@evidence("XLA503")
def _(o):
    bad, good = o["bad"], o["good"]
    assert good["compiles"] == 1 and bad["compiles"] >= 4 and (bad["transfers"], good["transfers"]) == (4, 0)
    return (f"boolean-mask indexing with a mask that changes each step: {bad['compiles']} compiles (`CompileTime`) and "
            "4 transfers in 4 steps; `x * mask`: 1 compile, no transfer.")


@evidence("XLA504")
def _(o):
    assert o["bad"]["executions"] == 0 and o["good"]["executions"] == 1
    return ("when the clock was read after 4 lazy matmuls the runtime had executed nothing (`ExecuteComputation` 0); "
            "`torch_xla.sync(wait=True)` then compiled and executed the graph.")


@evidence("XLA505")
def _(o):
    bad, good = o["bad"], o["good"]
    assert (bad["compiles"], bad["executions"], good["compiles"], good["executions"]) == (2, 8, 1, 4)
    return ("a `torch_xla.sync()` between backward and `opt.step()`: 2 graphs compiled and 8 executions in 4 steps, "
            "against 1 and 4 with one sync per step.")


@evidence("XLA506")
def _(o):
    assert o["other_replica_returned"] is True and "XLA506_after" not in o
    collective, seconds, arrived, expected = o["termination"]
    assert (arrived, expected) == (1, 2)
    return (f"{TWO}replica 0 called `xm.rendezvous` under a rank test after replica 1 had returned: it waited in the "
            f"rendezvous's {collective} until XLA ended the process after {seconds} seconds (\"Termination "
            f"timeout ... Expected 2 threads to join the rendezvous, but only 1 of them arrived on time\").")


@evidence("XLA507")
def _(o):
    bad, every = o["bad"], o["every_step"]
    assert (bad["transfers"], every["transfers"]) == (2, 8) and bad["executions"] < every["executions"]
    return (f"`loss.item()` under `if step % 4 == 0:` in 8 steps: 2 transfers and {bad['executions']} executions "
            f"(every step: 8 and {every['executions']}).")


@evidence("XLA508")
def _(o):
    bad, good, fresh = o["bad"], o["good"], o["fresh"]
    grows = bad["ir_lines"]
    assert bad["compiles"] == 6 and all(b > a for a, b in zip(grows, grows[1:]))
    assert good["compiles"] <= 2 and len(set(good["ir_lines"])) == 1 and fresh["compiles"] == 1
    return (f"`acc = acc * 0.5 + x; acc.sum().item()` in 6 iterations with no sync: 6 compiles, the graph growing "
            f"from {grows[0]} to {grows[-1]} IR lines; with `torch_xla.sync()` per iteration {good['compiles']} "
            "compiles, no growth; a fresh value per iteration: 1 compile.")


# --- XLA6: checkpoints ------------------------------------------------------------------------

@evidence("XLA601")
def _(o):
    assert o["bad_devices"] == ["xla:0"] and o["good"] == "['cpu']"
    assert o["bad"].startswith("NotImplementedError Could not run")
    return ("`torch.save(model.state_dict())` wrote tensors that load back on xla:0 and that plain torch cannot load "
            "(NotImplementedError: \"Could not run 'aten::empty.memory_format' with arguments from the 'XLA' "
            "backend\"); `xm.save` wrote CPU tensors.")


@evidence("XLA605")
def _(o):
    bad, waited, good = o["bad"], o["waited"], o["good"]
    assert (good["compiles"], good["executions"]) == (1, 2) and bad["compiles"] > 4 * good["compiles"]
    assert (waited["compiles"], waited["executions"]) == (bad["compiles"], bad["executions"])
    return (f"`dist_cp.save` of 8 tensors right after `opt.step()` in 2 steps: {bad['compiles']} compiles and "
            f"{bad['executions']} executions (also after `xm.wait_device_ops()`); with `torch_xla.sync()` first: 1 and 2.")


@evidence("XLA602")
def _(o):
    assert o["bad"] == [[0, "guarded.pt"]] and o["good"] == [[0, "every_replica.pt"]] and o["same_file"] is True
    return (f"{TWO}`xm.save` under `if xm.is_master_ordinal():` and `xm.save` called on both replicas each wrote "
            "the file once, from replica 0 (`master_only=True`), with the same contents: the rank test changed "
            "nothing.")


# --- XLA7: mixed precision --------------------------------------------------------------------

@evidence("XLA701")
def _(o):
    assert (ran(o["bad"]), ran(o["good"])) == ("torch.float32", "torch.bfloat16")
    return ("a matmul of XLA tensors under `torch.autocast(\"cuda\", dtype=torch.float16)` stayed float32; under "
            "`torch.autocast(\"xla\", dtype=torch.bfloat16)` it was bfloat16.")


@evidence("XLA702")
def _(o):
    raised(o["bad"], "AttributeError", "GradScaler")
    assert ran(o["good"]) == "torch.bfloat16"
    return "`torch_xla.amp.GradScaler` raised AttributeError (removed in 2.9); bf16 autocast runs with no scaler."


@evidence("XLA705")
def _(o):
    (line,) = o["printed"]
    assert "will be deprecated" in line
    assert (o["tensor_dtype"], o["computes_in"]) == ("torch.float32", "bf16")
    return f'`XLA_USE_BF16=1` printed "{line}" and made a tensor typed float32 compute in bf16.'


# --- XLA8: deprecated, removed and nonexistent APIs -------------------------------------------

def _removed(o, api, fix, value):
    raised(o["bad"], "AttributeError", api.split(".")[-1])
    assert silent(o["good"]) == value
    return f"`{api}` raised AttributeError (removed); `{fix}` returned {value}."


@evidence("XLA801")
def _(o):
    return _removed(o, "xm.xrt_world_size", "xr.world_size()", 1)


@evidence("XLA802")
def _(o):
    return _removed(o, "xm.get_ordinal", "xr.global_ordinal()", 0)


@evidence("XLA803")
def _(o):
    raised(o["bad"], "AttributeError", "parse_xla_device")
    assert ran(o["alias_target"]) == ["('TPU', 0)", "None"] and silent(o["good"]) == ["TPU", 0]
    return ("`xm.parse_xla_device` raised AttributeError (removed); the function it called parses hardware names "
            "(`('TPU', 0)` for `\"TPU:0\"`, None for `\"xla:0\"`), as `\"TPU:0\".partition(\":\")` splits them.")


@evidence("XLA804")
def _(o):
    assert o["bad"]["warnings"] == [["DeprecationWarning", "Use torch_xla.device instead"]]
    raised(o["bad_xr"], "AttributeError", "xla_device")
    assert silent(o["good"]) == "xla:0"
    return ("`xm.xla_device()` warned DeprecationWarning: \"Use torch_xla.device instead\" and `xr.xla_device` "
            "raised AttributeError; `torch_xla.device()` returned xla:0 with no warning.")


@evidence("XLA805")
def _(o):
    assert o["bad"]["warnings"] == [["DeprecationWarning", "Use torch_xla.sync instead"]]
    silent(o["good"])
    return ("`xm.mark_step()` warned DeprecationWarning: \"Use torch_xla.sync instead\"; `torch_xla.sync()` "
            "warned nothing.")


@evidence("XLA806")
def _(o):
    msg = raised(o["bad"], "ModuleNotFoundError", "torch_xla.experimental.pjrt")
    ran(o["good"])
    return f'`import torch_xla.experimental.pjrt` raised ModuleNotFoundError: "{msg}"; `torch_xla.runtime` imports.'


@evidence("XLA807")
def _(o):
    raised(o["bad"], "ModuleNotFoundError", "xla_sharding")
    raised(o["bad_tensor"], "ModuleNotFoundError", "xla_sharded_tensor")
    ran(o["good"])
    return ("`torch_xla.experimental.xla_sharding` and `xla_sharded_tensor` raised ModuleNotFoundError; "
            "`torch_xla.distributed.spmd` imports.")


@evidence("XLA808")
def _(o):
    raised(o["bad"], "AttributeError", "compile")
    assert ran(o["good"]) is True
    return "`torch_xla.experimental.compile` raised AttributeError; `torch_xla.compile` exists."


@evidence("XLA809")
def _(o):
    missing = raised(o["bad"], "TypeError", "missing 1 required positional argument: 'optimizer'")
    keyword = raised(o["bad_keyword"], "TypeError", "unexpected keyword argument 'defval'")
    ran(o["good"])
    return f'`xm.optimizer_step()` raised TypeError: "{missing}", and `xm.get_local_ordinal(defval=0)` "{keyword}".'


@evidence("XLA810")
def _(o):
    assert o["device_type"] == "CPU"
    raised(o["xla_dist"], "ModuleNotFoundError", "xla_dist")
    return ("with `XRT_TPU_CONFIG` set the runtime stayed PJRT (`xr.device_type()` CPU) and "
            "`torch_xla.distributed.xla_dist` raised ModuleNotFoundError.")


@evidence("XLA811")
def _(o):
    assert o["spmd_from_env"] is True and silent(o["good"]) is True
    ((category, message),) = o["use_spmd"]["warnings"]
    assert category == "UserWarning" and "XLA_USE_SPMD is being deprecated" in message
    return (f'`XLA_USE_SPMD=1` still turned SPMD on, and `xr.use_spmd()` with it set warned UserWarning: "{message}"; '
            "without it, `xr.use_spmd()` warned nothing.")


@evidence("XLA812")
def _(o):
    raised(o["bad"], "AttributeError", "xla_world_size")
    raised(o["bad_master"], "AttributeError", "is_master_process")
    assert silent(o["good"]) == 1
    return "`xm.xla_world_size()` and `xm.is_master_process()` raised AttributeError; `xr.world_size()` returned 1."


@evidence("XLA813")
def _(o):
    assert (o["tensor_dtype"], o["computes_in"]) == ("torch.float32", "f32")
    return ("`XLA_USE_BF61=1` (a typo of `XLA_USE_BF16`) changed nothing: the tensor computed in f32, where "
            "`XLA_USE_BF16=1` makes it bf16.")


# --- XLA9: runtime odds and ends --------------------------------------------------------------

@evidence("XLA901")
def _(o):
    msg = raised(o["bad"], "AssertionError", "already been initialized")
    silent(o["good"])
    return (f'`xr.initialize_cache(path)` after a graph ran raised AssertionError: "{msg}"; called before any device '
            "work, it returned.")


@evidence("XLA902")
def _(o):
    assert (o["world_size"], o["global_ordinal"], o["global_runtime_device_count"]) == (1, 0, 4)
    return ("under SPMD with 4 CPU devices, `xr.world_size()` was 1 and `xr.global_ordinal()` 0, while "
            "`xr.global_runtime_device_count()` was 4.")


@evidence("XLA903")
def _(o):
    assert o["bad"] == {"same_parameter": False, "equal_after_a_step": False}
    assert o["good"] == {"same_parameter": True, "equal_after_a_step": True}
    return ("an output layer tied to the embedding before `.to(xla)` came apart (two parameters, unequal after one "
            "SGD step); tied after the move, it stayed one parameter.")


@evidence("XLA904")
def _(o):
    assert ran(o["bad"]) == [0, 0] and ran(o["good"]) is True
    raised(o["bad_storage"], "RuntimeError", "invalid python storage")
    assert (ran(o["bad_stride"]), ran(o["good_stride"])) == ([4, 1], [1, 4])
    return ("`data_ptr()` was 0 for two different XLA tensors, `untyped_storage().data_ptr()` raised RuntimeError, "
            "and `x.t().stride()` of a 4x4 tensor read (4, 1) ((1, 4) on the CPU).")


@evidence("XLA905")
def _(o):
    msg = raised(o["bad"], "RuntimeError", "Expected XLA tensor")
    assert ran(o["good"]) == "XLAShardedTensor"
    return (f'`xs.mark_sharding` on a parameter of a module not yet moved raised RuntimeError: "{msg}"; after '
            "`.to(xla)` it sharded.")


@evidence("XLA906")
def _(o):
    ((category, message),) = o["bad"]["warnings"]
    assert category == "UserWarning" and message.startswith("Replicating tensors already initialized")
    assert o["bad_returncode"] == -11
    silent(o["good"])
    return ("`xr.use_spmd()` after a tensor was put on the device warned UserWarning: \"Replicating tensors already "
            "initialized on non-virtual XLA device...\" and the process died with SIGSEGV at its next computation; "
            "called first, it warned nothing.")


@evidence("XLA908")
def _(o):
    msg = raised(o["bad"], "RuntimeError", "The output type is not supported: <class 'dict'>")
    assert ran(o["good"]) == "{devices=[4,1]0,1,2,3}"
    return (f'FSDPv2 around a module whose forward returns a dict raised RuntimeError at the first forward: "{_first(msg)}"; '
            "given `shard_output=` marking the logits, it ran and the logits were sharded 4 ways.")


@evidence("XLA909")
def _(o):
    raised(o["bad"], "RuntimeError", "INTERNAL ASSERT FAILED")
    assert ran(o["good"]) == ["Tensor", True]
    assert o["param"] == ["XLAShardedTensor", True, False]
    return ("`h = xs.mark_sharding(h, ...)` made `h` an XLAShardedTensor and `backward()` through it raised "
            "RuntimeError (INTERNAL ASSERT FAILED in FunctionalTensorWrapper.cpp); the call alone left `h` a sharded "
            "tensor with gradients; the wrapper of a parameter had `requires_grad` False.")


@evidence("XLA910")
def _(o):
    assert ran(o["bad"]) == [["input_ids", "{devices=[4,1]0,1,2,3}"], ["label", "{replicated}"]]
    assert ran(o["good"]) == [["input_ids", "{devices=[4,1]0,1,2,3}"], ["label", "{devices=[4]0,1,2,3}"]]
    return ("`MpDeviceLoader(..., input_sharding=ShardingSpec(mesh, (\"data\", None)))` over dict batches sharded "
            "`input_ids` 4 ways and left the 1-D `label` replicated, without a warning; a dict of specs sharded both.")


@evidence("XLA911")
def _(o):
    msg = raised(o["bad"], "AssertionError", "Please convert all Tensors to FakeTensors first")
    assert ran(o["good"]) == [3.0, 3.0, 3.0, 3.0]
    return (f'`scan(fn, init, xs)` with `fn` reading a device tensor from outside raised AssertionError: "{_first(msg)}"; '
            "carried in the operands, the same loop ran.")


# --- the tests over the registered evidence (after every @evidence above) --------------------

def test_every_rule_is_classified():
    codes = set(all_rules())
    assert set(EVIDENCE) | set(DOCS_ONLY) == codes
    assert not set(EVIDENCE) & set(DOCS_ONLY)


@pytest.mark.parametrize("code", sorted(DOCS_ONLY_FACTS))
def test_docs_only_reason_holds(observed, code):
    """The runtime agrees with the reason a docs-only rule gives (DDP runs without the flag on
    2.9, the CPU device takes float16, the xla backend needs no import on 2.9)."""
    assert code in DOCS_ONLY
    record = observed[FACT_SOURCE.get(code, code)]
    assert DOCS_ONLY_FACTS[code](record), record


@pytest.mark.parametrize("code", sorted(EVIDENCE))
def test_rule_evidence(observed, code):
    assert code in observed, f"no program reported {code}"
    sentence = EVIDENCE[code](observed[code])
    assert sentence and "\n" not in sentence
