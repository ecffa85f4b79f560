"""Ports that run (issue 21 §2): what ``flake8-xla --fix`` writes, run on torch_xla 2.9 (CPU).

For every handed case (``tests/cases`` and ``../shared/cases``, read at run time: a case added
there later is a test here too), the bundled example ``examples/train_port.py`` and every fix
case ``tests/fix_cases/NAME.py``, the test copies the file to a temporary folder, fixes it with
the real CLI as a user would (``flake8-xla --isolated --extend-select=XLA --fix --unsafe-fixes``: every
rule on, the hints too, as the cases expect; plus the case's
``--xla-scope=always`` variant when it has one: the two seed ports, ``seed_*_before.py``, are
the complete scripts of the "before" side of the seed's diffs; a fix case runs with its own
``# options:`` line, so its output is the committed ``NAME.fixed.py``, which it asserts), and
runs the fixed file on the runtime named by ``FLAKE8_XLA_RUNTIME_PYTHON`` with one replica.
It then asserts that

- the fixed script runs to the end (exit 0 within the timeout),
- every optimizer that stepped changed its weights and every loss was a finite number (the
  harness below records both: a port whose optimizer holds the CPU parameters steps without
  changing them), and at least one optimizer stepped,
- re-linting the fixed file reports only what the fix leaves by design: for a fix case exactly
  the codes of its ``# remains:`` line; for the others only findings that have no fix, or
  whose fix declines that shape (``LEFT``, with the reason).

The harness never edits the fixed script's text. ``tests/runtime/ports/harness`` goes on
``PYTHONPATH``: its ``sitecustomize`` records the optimizer steps through torch's global
optimizer hooks (and the loss of each ``Tensor.backward()``), and ``tqdm`` stands in for the
real one, absent from the runtime venv. One replica: the CPU client has one device, so
``torch_xla.launch(fn)`` and ``xmp.spawn(fn)`` (no ``nprocs``, as the fixes write them) start
one worker process, and collectives (DDP's all-reduce, ``xm.optimizer_step``'s reduction) run
over that one replica. A lint case that passes ``None`` for its model or data gets small random
stand-ins (``ports/harness/standins.py``) from a plan below: its ``launch``/``spawn`` of the
named function runs in the same process as one replica (``debug_single_process=True``) with the
plan's arguments instead of the ``None`` ones; a case that only defines functions (no entry
point) is imported as a module by a small driver that calls the plan's functions.

A case whose fix changes nothing, or that does not train (no ``backward()``), is skipped with
that reason; the others not run are listed in ``NOT_RUN`` with theirs.
"""
from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from annotations import parse_case

pytestmark = pytest.mark.runtime

ROOT = Path(__file__).resolve().parents[2]
LOCAL_CASES = ROOT / "tests" / "cases"
SHARED_CASES = ROOT.parent / "shared" / "cases"
FIX_CASES = ROOT / "tests" / "fix_cases"
HARNESS = Path(__file__).resolve().parent / "ports" / "harness"
TIMEOUT = 240


@dataclass(frozen=True)
class Plan:
    """How to run one fixed script: stand-in arguments for launched functions, or the calls a
    driver makes into a module without an entry point, and extra environment."""

    launch: dict[str, str] = field(default_factory=dict)  # launched function -> args tuple expression
    calls: tuple[str, ...] = ()  # statements run after `import case` (names: case, S, torch, torch_xla)
    env: dict[str, str] = field(default_factory=dict)


def _same(plan_args: str, *names: str) -> dict[str, str]:
    return {name: plan_args for name in names}


PLANS: dict[str, Plan] = {
    # handed cases
    "plain_loader": Plan(launch={"worker": "(S.pairs(4, outputs=1),)"}),
    "leftover_ddp_import": Plan(launch={"train": "(S.loader(S.pairs(4, classes=2)), S.model(4, 2, on_device=False))"}),
    "star_imports": Plan(launch={"_mp_fn": "(S.pairs(16, classes=2),)"}),
    "unreduced_step": Plan(launch=_same("(S.loader(S.pairs(8, classes=2)),)", "worker", "worker_reduced")),
    "reduce_heuristics": Plan(launch={
        "train_reduced": "(S.loader(S.pairs(4, classes=2)), S.model(4, 2, on_device=False))",
        **_same("(S.loader(S.pairs(4, outputs=2)), S.model(4, 2))", "train_helper_reduced", "train_logged")}),
    "loader_helpers_sync": Plan(calls=(
        "case.fit_plain(S.model(4, 1), S.tensors(4))",
        "case.Runner(S.tensors(4), S.model(4, 1, on_device=False)).fit()")),
    "step_iterators": Plan(calls=(
        "case.train(S.model(4, 1, on_device=False), S.tensors(4), max_steps=4)",
        "case.train_until_exhausted(S.model(4, 1), S.tensors(4))")),
    # fix cases
    "XLA002_201_unsafe": Plan(launch={"train": "(S.loader(S.tensors(4)), *S.model_opt(4, 1))"}),
    "XLA203_201_clip_unsafe": Plan(launch={
        "clip_then_xm_step": "(S.loader(S.tensors(4)), *S.model_opt(4, 1), 1.0)",
        **_same("(S.loader(S.tensors(4)), *S.model_opt(4, 1))", "clip_then_plain_step", "step_under_a_branch")}),
    "XLA301_bar_device_unsafe": Plan(calls=(
        "case.train(*S.model_opt(4, 1), S.pairs(4, outputs=1))",
        "trainer = case.Trainer(S.model(4, 1, on_device=False), S.pairs(4, outputs=1))",
        "trainer.fit(torch.optim.SGD(trainer.model.parameters(), lr=0.1))",
        "case.train_on(*S.model_opt(4, 1), S.pairs(4, outputs=1), torch_xla.device())")),
    # zipped and plain_and_device keep their loops (the two XLA301 left): not ports
    "XLA301_unsafe": Plan(calls=(
        "case.with_a_device_variable(*S.model_opt(4, 1), S.pairs(4, outputs=1))",
        "case.inline_loader(*S.model_opt(4, 1), S.tensors(4))",
        "case.caller(*S.model_opt(4, 1), S.tensors(4))")),
    "XLA303_set_epoch_unsafe": Plan(launch=_same("S.model_opt(4, 1)", "later_epochs", "inside_epochs", "fit_epochs")),
    "XLA303_unsafe": Plan(launch=_same("S.model_opt(4, 1)", "shuffled", "random_sampler", "dataset_built_inline")),
    "XLA304_safe": Plan(calls=("case.train(S.tensors(4), *S.model_opt(4, 1))",)),
    "XLA304_unsafe": Plan(calls=("case.train(S.tensors(4), *S.model_opt(4, 1))",)),
    # optimizer_used_before_the_move keeps its XLA405 (left for a human): not a port
    "XLA404_405_unsafe": Plan(calls=(
        "case.left_on_host(S.loader(S.pairs(10, outputs=2)))",
        "case.optimizer_first(S.loader(S.pairs(10, outputs=2)))")),
    "XLA505_805": Plan(calls=("case.train(*S.model_opt(4, 1), S.device_batches(4))",)),
    # the save of step 0 writes a distributed checkpoint under the run's folder (ckpt/0)
    "XLA605": Plan(calls=("case.train(*S.model_opt(4, 1), [(x, x.sum(1, keepdim=True)) for x in S.device_batches(4)], "
                          "torch.nn.functional.mse_loss)",)),
    # the case asks for a second device (torch_xla.device(index=1)): the CPU client gets two
    "XLA804_805": Plan(calls=("case.train(S.loader(S.tensors(4)), *S.model_opt(4, 1))",),
                       env={"CPU_NUM_DEVICES": "2"}),
}

# Cases that train and are fixed but whose fixed script is not a port to run, with the reason.
NOT_RUN: dict[str, str] = {}

# Handed cases: findings of a fixable code that the fix declines by design, (case, code) -> why.
LEFT: dict[tuple[str, str], str] = {
    ("double_step", "XLA203"): "the step is not in the clip's block (it is under `if on_tpu:`), as the fix requires",
    ("step_iterators", "XLA301"): "a loader read by iter()/next() has no loop to wrap in MpDeviceLoader",
}

# Fixed scripts that must fail on the runtime, as the finding the fix leaves says: (why, stderr text).
EXPECTED_FAILURES: dict[str, tuple[str, str]] = {
    "seed_mp_after": ("the seed calls xm.optimizer_step() without its optimizer (XLA809, no fix)",
                      "optimizer_step() missing 1 required positional argument: 'optimizer'"),
}


@dataclass(frozen=True)
class Port:
    name: str
    path: Path
    flags: tuple[str, ...]  # lint flags (the fix adds --fix)
    remains: tuple[str, ...] | None  # fix cases: the codes left by design
    fixed: Path | None  # fix cases: the committed expected output
    requires: tuple[int, int] | None = None

    @property
    def key(self) -> str:
        """The name the plans use (a shared case that differs from the local copy runs as shared_NAME)."""
        return self.name.removeprefix("shared_")


def _handed() -> list[Port]:
    paths = {p.name: p for p in sorted(LOCAL_CASES.glob("*.py"))}
    if SHARED_CASES.is_dir():
        for p in sorted(SHARED_CASES.glob("*.py")):
            if p.name not in paths or p.read_bytes() != paths[p.name].read_bytes():
                paths[p.name if p.name not in paths else f"shared_{p.name}"] = p
    ports = []
    for key, path in paths.items():
        case = parse_case(path)
        flags = ["--unsafe-fixes"]
        for variant in case.variants.values():
            if "--xla-scope=always" in variant:
                flags += variant
                break
        ports.append(Port(Path(key).stem, path, tuple(flags), None, None, case.requires))
    return ports


def _header(text: str, key: str) -> list[str]:
    for line in text.splitlines()[:3]:
        m = re.match(rf"#\s*{key}\s*:(.*)$", line)
        if m:
            return shlex.split(m.group(1))
    return []


def _fix_cases() -> list[Port]:
    ports = []
    for path in sorted(p for p in FIX_CASES.glob("*.py") if not p.name.endswith(".fixed.py")):
        text = path.read_text(encoding="utf-8")
        ports.append(Port(path.stem, path, tuple(_header(text, "options")), tuple(_header(text, "remains")),
                          path.with_name(path.stem + ".fixed.py")))
    return ports


PORTS = [Port("train_port", ROOT / "examples" / "train_port.py", ("--unsafe-fixes",), None, None),
         *_handed(), *_fix_cases()]


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "flake8_xla", "--isolated", "--extend-select=XLA", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120, check=False)


def _lint(path: Path, flags: tuple[str, ...]) -> list[dict]:
    done = _cli("--format=json", *flags, path.name, cwd=path.parent)
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


DRIVER = """\
import importlib.util
import sys

import standins as S
import torch
import torch_xla

spec = importlib.util.spec_from_file_location("case", "{name}")
case = importlib.util.module_from_spec(spec)
sys.modules["case"] = case
spec.loader.exec_module(case)
{calls}
"""


@pytest.fixture(scope="session")
def runtime_version(runtime_python) -> tuple[int, int]:
    out = subprocess.run([runtime_python, "-c", "import sys; print(*sys.version_info[:2])"],
                         capture_output=True, text=True, check=True).stdout
    major, minor = out.split()
    return int(major), int(minor)


@pytest.mark.parametrize("port", PORTS, ids=lambda p: p.name)
def test_fixed_script_trains_on_the_runtime(port, run_program, runtime_version, tmp_path):
    if port.requires and port.requires > runtime_version:
        pytest.skip(f"the case needs Python {port.requires}, the runtime has {runtime_version}")
    work = tmp_path / "port"
    work.mkdir()
    target = work / f"{port.name}.py"
    original = port.path.read_text(encoding="utf-8")
    target.write_text(original, encoding="utf-8")
    done = _cli("--fix", *port.flags, target.name, cwd=work)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    fixed = target.read_text(encoding="utf-8")
    if port.fixed is not None:  # the CLI writes what the fixer's own test expects
        assert fixed == port.fixed.read_text(encoding="utf-8")

    # re-lint: only what the fix leaves by design
    after = _lint(target, tuple(f for f in port.flags if f != "--unsafe-fixes"))
    if port.remains is not None:
        assert Counter(f["code"] for f in after) == Counter(port.remains)
    else:
        assert [(f["line"], f["code"]) for f in after
                if f["fix"] != "none" and (port.key, f["code"]) not in LEFT] == []

    if fixed == original:
        pytest.skip("--fix changes nothing here: no port to run")
    if ".backward(" not in fixed:
        pytest.skip("does not train (no backward()): nothing a port run would show")
    if port.key in NOT_RUN:
        pytest.skip(NOT_RUN[port.key])

    ran, records = _run(run_program, tmp_path, target.name, fixed, PLANS.get(port.key, Plan()))
    if port.key in EXPECTED_FAILURES:
        why, text = EXPECTED_FAILURES[port.key]
        assert ran.returncode != 0 and text in ran.stderr, (why, ran.stderr[-3000:])
        return
    assert ran.returncode == 0, ran.stderr[-4000:]
    stepped = [r for r in records if r["steps"]]
    assert stepped, "no optimizer stepped"
    for r in stepped:
        assert r["after"] != r["before"], f"{r['type']} stepped {r['steps']} times and its weights did not change"
        assert r["losses"] and None not in r["losses"], r


def _run(run_program, tmp_path: Path, name: str, fixed: str, plan: Plan):
    """Run ``fixed`` (as ``name``) by ``plan`` with the harness; return the run and the optimizer records."""
    report = tmp_path / "report"
    report.mkdir()
    env = {"PYTHONPATH": str(HARNESS), "FLAKE8_XLA_PORT_REPORT": str(report), **plan.env}
    if plan.launch:
        env["FLAKE8_XLA_PORT_STANDINS"] = json.dumps(plan.launch)
    if plan.calls:
        ran = run_program(DRIVER.format(name=name, calls="\n".join(plan.calls)), timeout=TIMEOUT,
                          env=env, files={name: fixed}, name="drive.py")
    else:
        ran = run_program(fixed, timeout=TIMEOUT, env=env, name=name)
    records = [r for path in sorted(report.glob("*.json")) for r in json.loads(path.read_text())]
    return ran, records


def test_the_harness_sees_weights_that_stay_and_losses_that_are_not_finite(run_program, tmp_path):
    """The two checks above can fail: an optimizer built before ``model.to(xla)`` (the XLA405
    that XLA404_405_unsafe leaves for a human) steps 8 times and its weights stay; a NaN
    input in the data makes every loss NaN (recorded as ``None``)."""
    fixed = (FIX_CASES / "XLA404_405_unsafe.fixed.py").read_text(encoding="utf-8")
    plan = Plan(calls=("case.optimizer_used_before_the_move(S.loader(S.pairs(10, outputs=2)))",
                       "case.left_on_host(S.loader(S.poisoned(S.pairs(10, outputs=2))))"))
    ran, records = _run(run_program, tmp_path, "case.py", fixed, plan)
    assert ran.returncode == 0, ran.stderr[-4000:]
    assert [(r["steps"], r["after"] == r["before"]) for r in records] == [(8, True), (8, False)]
    assert records[0]["losses"].count(None) == 0
    assert records[1]["losses"] == [None] * 8
