"""Benchmark: the plugin's cost in parse units, beside other flake8 plugins in the same run.

    python benchmarks/bench.py --corpus DIR [--rounds N] [--scope auto|always] [--every K]
                               [--no-fast-path] [--no-loop] [--memory] [--project on|off]
    python benchmarks/bench.py --generated N [--rounds N]
    python benchmarks/bench.py --generated-project N [--rounds N]
    python benchmarks/bench.py --issue28 --corpus PTXLA --torch TORCH [--rounds N] [--lsp-file F]

The unit is a **parse unit**: the CPU time of ``ast.parse`` over every file of the corpus
with the garbage collector paused, each tree dropped before the next file is parsed (the
parse flake8 shares with its plugins, without the collector visiting trees a benchmark
keeps alive). Every other figure is a ratio to the parse unit of the same round, and the
printed value is the median of those ratios over the rounds (the machine may be shared and
busy: a ratio within one round survives load that changes between rounds).

Each round measures, in a rotating order:

- ``engine``: ``engine.run`` on a freshly parsed tree of each file (parse untimed), the
  collector paused as for the unit;
- ``engine project``: the same with the file's path, in project mode (``xla-project=on``):
  the project's modules read, summarised and followed as one ``flake8 -j1`` process would
  (the project cache is cleared at the start of each round, so each round pays for it
  once); printed as ``ratio project/engine`` (issue 18 asks at most 1.3);
- ``walk``: a bare iterative walk of each fresh tree (``ast.iter_child_nodes`` over a
  stack), the floor of any plugin that looks at every node;
- a flake8-like loop with the collector on, as flake8 runs: for each file parse, run the
  plugins, drop the tree. ``base`` runs pyflakes (when installed); each plugin's
  **marginal** cost is ``loop(base + plugin) - loop(base)``, garbage collections it
  causes included. Plugins: flake8-xla (also its time ``in call``), a no-op plugin and,
  when installed, flake8-bugbear (``pip install -e '.[bench]'``); pyflakes' own marginal
  is ``loop(base) - loop(parse only)``.

``--generated N`` benchmarks the worst-case shapes of tests/generated.py at size N, one
file each, instead of a corpus (the engine must stay linear on them).
``--generated-project N`` benchmarks a generated project of N modules
(tests/test_linear_project.py's chain shape) for the project-mode row. ``--project off``
runs the flake8-like loop's plugin without project mode. ``--every K`` keeps
every K-th file (sorted by path) of a large corpus. A benchmark, not a test; the last line
is ``ratio engine/parse: X.XXX``.

``--issue28`` prints the six rows of issue 28's cost table in one run (:mod:`issue28`
beside this file): project mode against single-file mode (``--xla-project=off``), each
measurement in a fresh process, the measurements of a round interleaved in an order that
rotates with the round, each figure the median over the rounds of a ratio within one round.
"""

from __future__ import annotations

import argparse
import ast
import gc
import resource
import statistics
import sys
import time
import tracemalloc
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from flake8_xla import engine, project  # noqa: E402
from flake8_xla.flake8_plugin import Plugin  # noqa: E402
from flake8_xla.settings import from_options  # noqa: E402

clock = time.process_time


def load(corpus: Path, every: int = 1):
    files = []
    for i, path in enumerate(sorted(corpus.rglob("*.py"))):
        if i % every:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        files.append((str(path), text, text.splitlines(keepends=True)))
    return files


def write_generated(n: int) -> Path:
    """Write tests/generated.py's shapes at size ``n`` into a temporary folder."""
    import tempfile

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from generated import GENERATORS

    folder = Path(tempfile.mkdtemp(prefix="flake8_xla_generated_"))
    for name, gen in GENERATORS.items():
        (folder / f"{name}_{n}.py").write_text(gen(n), encoding="utf-8")
    return folder


def write_generated_project(n: int) -> Path:
    """Write tests/test_linear_project.py's chain project of ``n`` modules into a temporary folder."""
    import tempfile

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from test_linear_project import chain

    folder = Path(tempfile.mkdtemp(prefix="flake8_xla_project_"))
    chain(folder, n)
    return folder


def parse(text: str) -> ast.AST:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(text)


# -- plugins as flake8 calls them: construct with the tree, exhaust run() -----------------

def xla_plugin(settings, fast_path: bool):
    Plugin.settings = settings

    def call(tree, path, lines):
        return sum(1 for _ in Plugin(tree, lines if fast_path else None, path).run())
    return call


def noop_plugin(tree, path, lines):
    return sum(1 for _ in ())


def comparators() -> dict:
    """The other plugins installed here, called as flake8 calls them."""
    found = {}
    try:
        import pyflakes.checker
    except ImportError:
        pass
    else:
        def pyflakes_plugin(tree, path, lines):
            return len(pyflakes.checker.Checker(tree, filename=path).messages)
        found["pyflakes"] = pyflakes_plugin
    try:
        import bugbear
    except ImportError:
        pass
    else:
        def bugbear_plugin(tree, path, lines):
            return sum(1 for _ in bugbear.BugBearChecker(tree=tree, filename=path, lines=lines).run())
        found["bugbear"] = bugbear_plugin
    return found


def bare_walk(tree) -> int:
    n = 0
    stack = [tree]
    children = ast.iter_child_nodes
    while stack:
        node = stack.pop()
        n += 1
        stack.extend(children(node))
    return n


# -- one round: every step on each file in turn ---------------------------------------------

def one_round(files, steps: dict, shift: int) -> dict[str, float]:
    """CPU seconds per step over the corpus, the steps interleaved file by file in an order
    that rotates with the file, so load that changes during the run falls on every step
    alike. A step is ``(kind, work)``: ``unit`` times the parse (collector paused),
    ``paused`` times ``work(tree, file)`` on a fresh tree (collector paused, parse
    untimed), ``loop`` times parse + ``work`` + drop with the collector on, as flake8 runs
    (``work`` returns the seconds inside the plugin it watches). Every step starts from an
    untimed full collection, then freezes the survivors (``gc.freeze``: modules, the
    corpus, caches the plugins filled): the next collection looks only at what the step
    made, and each step starts from the same collector state, so a loop pays for the
    collections its own allocations cause, not for another step's."""
    names = list(steps)
    total = dict.fromkeys(names, 0.0)
    total["in call"] = 0.0
    for i, f in enumerate(files):
        k = (i + shift) % len(names)
        for name in names[k:] + names[:k]:
            kind, work = steps[name]
            gc.collect()
            gc.freeze()  # what survives (caches the plugins filled) is long-lived too
            if kind == "loop":
                t0 = clock()
                tree = parse(f[1])
                inside = work(tree, f)
                del tree
                total[name] += clock() - t0
                total["in call"] += inside
                continue
            gc.disable()
            try:
                if kind == "unit":
                    t0 = clock()
                    tree = parse(f[1])
                    total[name] += clock() - t0
                else:
                    tree = parse(f[1])
                    t0 = clock()
                    work(tree, f)
                    total[name] += clock() - t0
                del tree
            finally:
                gc.enable()
    return total


def loop_of(plugins, watched=None):
    """flake8's per-file plugin calls, the seconds inside ``watched`` returned."""
    def work(tree, f):
        inside = 0.0
        path, _, lines = f
        for p in plugins:
            if p is watched:
                t0 = clock()
                p(tree, path, lines)
                inside += clock() - t0
            else:
                p(tree, path, lines)
        return inside
    return work


def main(argv=None) -> int:
    if argv is None and "--issue28" in sys.argv[1:]:
        from issue28 import main as issue28_main  # (benchmarks/ is this script's folder: on sys.path)

        return issue28_main([a for a in sys.argv[1:] if a != "--issue28"])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--corpus", type=Path)
    source.add_argument("--generated", type=int, metavar="N", help="the generated worst cases at size N")
    source.add_argument("--generated-project", type=int, metavar="N", help="a generated project of N modules")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--every", type=int, default=1, metavar="K", help="keep every K-th file")
    parser.add_argument("--scope", default="auto", choices=("auto", "always"))
    parser.add_argument("--no-fast-path", action="store_true", help="walk every file (source not passed)")
    parser.add_argument("--no-loop", action="store_true", help="skip the flake8-like loops (engine only)")
    parser.add_argument("--memory", action="store_true", help="also the engine's peak allocation (slow)")
    parser.add_argument("--project", default="on", choices=("on", "off"), help="project mode of the flake8-like loop")
    parser.add_argument("--loops-only", action="store_true", help="only the parse unit and the flake8-like loops")
    args = parser.parse_args(argv)
    settings = from_options({"xla-scope": args.scope, "xla-project": args.project})
    project_settings = from_options({"xla-scope": args.scope, "xla-project": "on"})
    fast = not args.no_fast_path
    if args.generated is not None:
        args.corpus = write_generated(args.generated)
    if args.generated_project is not None:
        args.corpus = write_generated_project(args.generated_project)
    files = load(args.corpus, args.every)
    if not files:
        parser.error(f"no parsable .py files under {args.corpus}")

    findings = 0

    def run_engine(tree, f):
        nonlocal findings
        findings += len(engine.run(tree, settings, f[2] if fast else None))

    def run_engine_project(tree, f):
        engine.run(tree, project_settings, f[2] if fast else None, filename=f[0])

    others = comparators()
    xla = xla_plugin(settings, fast)
    base = [others["pyflakes"]] if "pyflakes" in others else []
    steps = {"unit": ("unit", None), "engine": ("paused", run_engine), "engine project": ("paused", run_engine_project),
             "walk": ("paused", lambda tree, f: bare_walk(tree))}
    loops = [] if args.no_loop else ["parse only", "base", "xla", "noop"] + (["bugbear"] if "bugbear" in others else [])
    plugins = {"parse only": [], "base": base, "xla": base + [xla], "noop": base + [noop_plugin],
               "bugbear": base + [others.get("bugbear")]}
    if args.loops_only:
        steps = {"unit": ("unit", None)}
    for name in loops:
        steps[f"loop {name}"] = ("loop", loop_of(plugins[name], xla if name == "xla" else None))
    # the long-lived objects (modules, the corpus) out of the collector's way: a full
    # collection between steps is then free, and every step starts from the same state
    gc.collect()
    gc.freeze()
    samples: dict[str, list[float]] = {}
    units = []
    for r in range(args.rounds):
        findings = 0
        project.clear_cache()
        got = one_round(files, steps, r)
        unit = got["unit"]
        units.append(unit)
        ratios = {} if args.loops_only else {
            "engine": got["engine"] / unit, "walk": got["walk"] / unit,
            "engine project": got["engine project"] / unit, "project/engine": got["engine project"] / got["engine"]}
        if loops:
            ratios["loop parse only"] = got["loop parse only"] / unit
            ratios["loop base"] = got["loop base"] / unit
            if base:
                ratios["pyflakes marginal"] = (got["loop base"] - got["loop parse only"]) / unit
            for name in ("xla", "noop", "bugbear"):
                if name in loops:
                    ratios[f"{name} marginal"] = (got[f"loop {name}"] - got["loop base"]) / unit
            ratios["xla in call"] = got["in call"] / unit
            if "bugbear" in loops:
                ratios["xla/bugbear marginal"] = ratios["xla marginal"] / ratios["bugbear marginal"]
        for k, v in ratios.items():
            samples.setdefault(k, []).append(v)

    print(f"corpus: {args.corpus}{f' (every {args.every}th file)' if args.every > 1 else ''}")
    print(f"files: {len(files)}")
    print(f"lines: {sum(len(f[2]) for f in files)}")
    print(f"scope: {args.scope}{' (no fast path)' if not fast else ''}")
    print(f"findings: {findings}")
    print(f"rounds: {args.rounds}; comparators: {', '.join(others) or 'none installed'}")
    print(f"parse unit (GC paused, trees dropped): median {statistics.median(units):.3f} CPU s")
    print("medians over rounds of per-round ratios to the parse unit (min..max):")
    for k, vals in samples.items():
        if k == "engine":
            continue
        print(f"  {k:22} {statistics.median(vals):7.3f}   ({min(vals):.3f}..{max(vals):.3f})")
    if args.memory:
        tree = parse(max(files, key=lambda f: len(f[1]))[1])
        tracemalloc.start()
        engine.run(tree, settings, None)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        print(f"peak memory: process max RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB; "
              f"engine peak allocation (largest file, full walk) {peak / 2**20:.1f} MiB")
    if args.loops_only:
        return 0
    vals = samples["engine"]
    print(f"ratio engine/parse: {statistics.median(vals):.3f}   ({min(vals):.3f}..{max(vals):.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
