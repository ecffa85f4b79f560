"""Benchmark: the engine's cost relative to ``ast.parse`` of the same files.

    python benchmarks/bench.py --corpus DIR [--rounds N] [--scope auto|always] [--no-fast-path]
    python benchmarks/bench.py --generated N [--rounds N]

``--generated N`` benchmarks the worst-case shapes of tests/generated.py (N early returns,
an N-branch elif chain, N superseding findings, an N-deep call chain, N step loops), one
file each, instead of a corpus: the engine must stay linear on them.

In one process, interleaved rounds: parse every file (timed), then run the engine on
the parsed trees (timed), as flake8 does (it parses once and hands the tree and lines to
the plugin). Prints the files, lines, median parse and engine CPU seconds, peak memory,
and as its last line ``ratio engine/parse: X.XXX``. A benchmark, not a test.
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

from flake8_xla import engine  # noqa: E402
from flake8_xla.settings import build  # noqa: E402


def load(corpus: Path):
    files = []
    for path in sorted(corpus.rglob("*.py")):
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
        files.append((path, text, text.splitlines(keepends=True)))
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


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--corpus", type=Path)
    source.add_argument("--generated", type=int, metavar="N", help="the generated worst cases at size N")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--scope", default="auto", choices=("auto", "always"))
    parser.add_argument("--no-fast-path", action="store_true", help="walk every file (source not passed)")
    args = parser.parse_args(argv)
    settings = build(args.scope)
    if args.generated is not None:
        args.corpus = write_generated(args.generated)
    files = load(args.corpus)
    if not files:
        parser.error(f"no parsable .py files under {args.corpus}")
    lines = sum(len(f[2]) for f in files)
    parse_times, engine_times = [], []
    findings = 0
    for _ in range(args.rounds):
        gc.collect()
        t0 = time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            trees = [ast.parse(text) for _, text, _ in files]
        parse_times.append(time.process_time() - t0)
        gc.collect()
        t0 = time.process_time()
        findings = 0
        for tree, (_, _, src_lines) in zip(trees, files):
            findings += len(engine.run(tree, settings, None if args.no_fast_path else src_lines))
        engine_times.append(time.process_time() - t0)
        del trees
    # peak memory of one engine pass over the corpus (untimed, tracemalloc slows it)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trees = [ast.parse(text) for _, text, _ in files]
    tracemalloc.start()
    for tree, (_, _, src_lines) in zip(trees, files):
        engine.run(tree, settings, None if args.no_fast_path else src_lines)
    _, engine_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    parse_med = statistics.median(parse_times)
    engine_med = statistics.median(engine_times)
    print(f"files: {len(files)}")
    print(f"lines: {lines}")
    print(f"scope: {args.scope}{' (no fast path)' if args.no_fast_path else ''}")
    print(f"findings: {findings}")
    print(f"median parse CPU s: {parse_med:.3f}")
    print(f"median engine CPU s: {engine_med:.3f}")
    print(f"peak memory: process max RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB; "
          f"engine peak allocation (largest file) {engine_peak / 2**20:.1f} MiB")
    print(f"ratio engine/parse: {engine_med / parse_med:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
