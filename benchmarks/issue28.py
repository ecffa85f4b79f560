"""Issue 28's cost table in one run: ``python benchmarks/bench.py --issue28 --corpus PTXLA --torch TORCH``.

Project mode (``--xla-project=on``, the default) against single-file mode (``off``), on the
pytorch/xla tree (``--corpus``: its ``*.py`` files, a root marker at the top) and on torch's
Python files (``--torch``). Each measurement runs in a fresh process, as a lint run does, and
its time is CPU time (user + system) of that process's work, not wall time (the machine is
shared and busy): a round takes every measurement once, in an order that rotates with the
round, and each printed figure is the median over the rounds of a ratio within one round.

The rows:

- ``engine, cold cache``: ``engine.run`` over every file of the tree by its path (the parse
  outside the timer), project mode with an empty on-disk cache (a new folder each round),
  over the same in single-file mode;
- ``engine, warm cache``: the same with the cache a previous process filled (the second run);
- ``torch-free code``: the same over torch's files (code that is not torch_xla code: all
  but a handful of its modules are the fast path's), project mode with a cold cache over
  single-file mode (the row), and with a warm one (in its notes);
- ``flake8 -j1 --select=XLA``: the whole process (``python -m flake8``), cold and warm cache,
  over ``--xla-project=off``: the CPU time of the child;
- ``XLA/bugbear marginal, project mode on``: ``bench.py --loops-only`` over the tree (the
  flake8-like loop in one process, the project layer in memory from its first round, the
  on-disk cache warm): flake8-xla's marginal cost over flake8-bugbear's;
- ``LSP edit-to-diagnostics``: a scripted session with ``python -m flake8_xla.server`` over
  standard input and output: open a module of about 1,500 lines of the tree (default
  ``torch_xla/core/xla_model.py``, 1,546 lines, the module most of the tree imports), lint it
  twice (warm), then change the buffer and wait for its diagnostics of that version, several
  times: the wall time from the change to the diagnostics minus the debounce
  (``server.DEBOUNCE``), and the server's CPU time over the same span; also with
  ``xla-project`` off in the client settings, for comparison.

Every measurement also prints how many findings it got (and a digest of them): every mode
must give the same findings on these trees.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

LIMITS = {"engine, cold cache": 1.3, "engine, warm cache": 1.05, "torch-free code": 1.1,
          "flake8 -j1 --select=XLA, cold cache": 1.2, "flake8 -j1 --select=XLA, warm cache": 1.2,
          "XLA/bugbear marginal, project mode on": 0.25, "LSP edit-to-diagnostics above the debounce (ms)": 150}


# -- one engine run in a fresh process -----------------------------------------------------

def engine_worker(argv) -> int:
    """``issue28.py --engine-worker CORPUS on|off [REPO]``: every file's ``engine.run`` by its
    path, with the package of the checkout ``REPO`` (default this one); prints JSON (engine CPU
    seconds, parse CPU seconds, findings, their digest, cache stats)."""
    import ast
    import warnings

    sys.path.insert(0, argv[2] if len(argv) > 2 else str(REPO))
    from flake8_xla import engine
    from flake8_xla.project import cache
    from flake8_xla.settings import from_options

    corpus, mode = Path(argv[0]), argv[1]
    settings = from_options({"xla-project": mode})
    paths = sorted(str(p) for p in corpus.rglob("*.py"))
    clock = time.process_time
    spent = parsing = 0.0
    found = []
    for path in paths:
        try:
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
            t0 = clock()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tree = ast.parse(text)
            parsing += clock() - t0
        except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):  # (undecodable: ValueError)
            continue
        lines = text.splitlines(keepends=True)
        t0 = clock()
        got = engine.run(tree, settings, lines, filename=path)
        spent += clock() - t0
        found.extend((path, f.line, f.col, f.code) for f in got)
        del tree
    digest = hashlib.sha1(repr(sorted(found)).encode()).hexdigest()[:12]
    print(json.dumps({"cpu": spent, "parse": parsing, "findings": len(found), "digest": digest,
                      "cache": cache.stats()}))
    return 0


def _child_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_engine(corpus: Path, mode: str, cache_dir: Path | None, repo: Path = REPO) -> dict:
    env = dict(os.environ)
    if cache_dir is not None:
        env["FLAKE8_XLA_CACHE_DIR"] = str(cache_dir)
    out = subprocess.run([sys.executable, str(Path(__file__)), "--engine-worker", str(corpus), mode, str(repo)],
                         env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_flake8(corpus: Path, mode: str, cache_dir: Path) -> dict:
    env = dict(os.environ, FLAKE8_XLA_CACHE_DIR=str(cache_dir))
    before = _child_cpu()
    out = subprocess.run([sys.executable, "-m", "flake8", "-j1", "--select=XLA", f"--xla-project={mode}", "."],
                         cwd=corpus, env=env, capture_output=True, text=True)
    cpu = _child_cpu() - before
    if out.returncode not in (0, 1):
        raise RuntimeError(f"flake8 failed: {out.stderr[-2000:]}")
    lines = sorted(out.stdout.splitlines())
    return {"cpu": cpu, "findings": len(lines), "digest": hashlib.sha1("\n".join(lines).encode()).hexdigest()[:12]}


# -- a scripted LSP session ------------------------------------------------------------------

class Session:
    """``python -m flake8_xla.server`` driven over its standard input and output."""

    def __init__(self, root: Path, options: dict) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "flake8_xla.server"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=root)
        self.next_id = 0
        self.published: dict[tuple[str, int | None], tuple[float, int]] = {}
        self.cond = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()
        uri = root.resolve().as_uri()
        self.request("initialize", {"processId": os.getpid(), "rootUri": uri, "capabilities": {},
                                    "workspaceFolders": [{"uri": uri, "name": root.name}],
                                    "initializationOptions": options})
        self.notify("initialized", {})

    def _send(self, message: dict) -> None:
        body = json.dumps(message).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def notify(self, method: str, params: dict) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method: str, params: dict) -> None:
        self.next_id += 1
        self._send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})

    def _read(self) -> None:
        stream = self.proc.stdout
        while True:
            length = None
            while True:
                line = stream.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            message = json.loads(stream.read(length))
            if "method" in message and "id" in message:  # a request of the server's: answered empty
                self._send({"jsonrpc": "2.0", "id": message["id"], "result": None})
            elif message.get("method") == "textDocument/publishDiagnostics":
                p = message["params"]
                with self.cond:
                    self.published[(p["uri"], p.get("version"))] = (time.perf_counter(), len(p["diagnostics"]))
                    self.cond.notify_all()

    def cpu(self) -> float:
        """The server's CPU seconds so far (Linux: ``/proc``)."""
        with open(f"/proc/{self.proc.pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def wait(self, uri: str, version: int, timeout: float = 120.0) -> tuple[float, int]:
        with self.cond:
            if not self.cond.wait_for(lambda: (uri, version) in self.published, timeout):
                raise TimeoutError(f"no diagnostics for {uri} version {version}")
            return self.published[(uri, version)]

    def close(self) -> None:
        try:
            self.request("shutdown", {})
            self.notify("exit", {})
            self.proc.wait(timeout=10)
        except Exception:
            self.proc.kill()
            self.proc.wait()


def lsp_round(root: Path, module: Path, mode: str, edits: int) -> list[tuple[float, float, int]]:
    """``[(wall seconds above the debounce, server CPU seconds, diagnostics)]`` of ``edits``
    changes of the buffer of ``module``, after an open and two warming changes."""
    sys.path.insert(0, str(REPO))
    from flake8_xla.server import DEBOUNCE

    text = module.read_text(encoding="utf-8")
    uri = module.resolve().as_uri()
    session = Session(root, {"xla-project": mode})
    out = []
    try:
        session.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                                 "text": text}})
        session.wait(uri, 1)
        for version in range(2, 4 + edits):
            # an edit: a comment line inserted near the top, or a statement appended at the end
            changed = text.replace("\n", f"\n# edit {version}\n", 1) if version % 2 else text + f"\n_edit = {version}\n"
            cpu0, t0 = session.cpu(), time.perf_counter()
            session.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                                      "contentChanges": [{"text": changed}]})
            t1, count = session.wait(uri, version)
            cpu = session.cpu() - cpu0
            if version >= 4:  # the first two changes warm the server
                out.append((t1 - t0 - DEBOUNCE, cpu, count))
            time.sleep(0.1)
    finally:
        session.close()
    return out


# -- the run -----------------------------------------------------------------------------------

def main(argv) -> int:
    if argv and argv[0] == "--engine-worker":
        return engine_worker(argv[1:])
    parser = argparse.ArgumentParser(prog="bench.py --issue28", description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, required=True, help="the pytorch/xla tree's *.py files")
    parser.add_argument("--torch", type=Path, required=True, help="torch's *.py files")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--edits", type=int, default=6, help="timed LSP edits per round")
    parser.add_argument("--lsp-file", type=Path, default=None,
                        help="the LSP module (default CORPUS/torch_xla/core/xla_model.py)")
    parser.add_argument("--baseline", type=Path, default=None,
                        help="another checkout (e.g. a `git archive` of an older commit): its engine rows too, "
                             "in the same rounds")
    parser.add_argument("--skip", action="append", default=[], choices=("torch", "flake8", "marginal", "lsp"),
                        help="leave a part out (a quicker look)")
    args = parser.parse_args(argv)
    corpus, torch = args.corpus.resolve(), args.torch.resolve()
    lsp_file = (args.lsp_file or corpus / "torch_xla" / "core" / "xla_model.py").resolve()
    scratch = Path(tempfile.mkdtemp(prefix="flake8_xla_issue28_"))
    warm_engine, warm_flake8, warm_torch = scratch / "warm-engine", scratch / "warm-flake8", scratch / "warm-torch"
    try:
        # the warm caches: filled once by a first run (its cold figures are not kept)
        run_engine(corpus, "on", warm_engine)
        base, warm_base = args.baseline, scratch / "warm-base"
        if base is not None:
            run_engine(corpus, "on", warm_base, base)
        if "torch" not in args.skip:
            run_engine(torch, "on", warm_torch)
        if "flake8" not in args.skip:
            run_flake8(corpus, "on", warm_flake8)
        steps = {
            "engine off": lambda r: run_engine(corpus, "off", scratch / f"unused-{r}"),
            "engine cold": lambda r: run_engine(corpus, "on", scratch / f"cold-engine-{r}"),
            "engine warm": lambda r: run_engine(corpus, "on", warm_engine),
        }
        if base is not None:
            steps["base cold"] = lambda r: run_engine(corpus, "on", scratch / f"cold-base-{r}", base)
            steps["base warm"] = lambda r: run_engine(corpus, "on", warm_base, base)
        if "torch" not in args.skip:
            steps["torch off"] = lambda r: run_engine(torch, "off", scratch / f"unused-{r}")
            steps["torch on"] = lambda r: run_engine(torch, "on", scratch / f"cold-torch-{r}")
            steps["torch warm"] = lambda r: run_engine(torch, "on", warm_torch)
            if base is not None:
                steps["base torch"] = lambda r: run_engine(torch, "on", scratch / f"cold-base-torch-{r}", base)
        if "flake8" not in args.skip:
            steps["flake8 off"] = lambda r: run_flake8(corpus, "off", scratch / f"unused-{r}")
            steps["flake8 cold"] = lambda r: run_flake8(corpus, "on", scratch / f"cold-flake8-{r}")
            steps["flake8 warm"] = lambda r: run_flake8(corpus, "on", warm_flake8)
        if "lsp" not in args.skip:
            steps["lsp off"] = lambda r: lsp_round(corpus, lsp_file, "off", args.edits)
            steps["lsp on"] = lambda r: lsp_round(corpus, lsp_file, "on", args.edits)
        names = list(steps)
        got: dict[str, list] = {n: [] for n in names}
        for r in range(args.rounds):
            k = r % len(names)
            for name in names[k:] + names[:k]:
                t0 = time.perf_counter()
                got[name].append(steps[name](r))
                print(f"  round {r + 1} {name}: {_brief(got[name][-1])} ({time.perf_counter() - t0:.0f} s wall)",
                      file=sys.stderr, flush=True)
        marginal = {}
        if "marginal" not in args.skip:
            for mode in ("on", "off"):
                out = subprocess.run([sys.executable, str(HERE / "bench.py"), "--corpus", str(corpus), "--project", mode,
                                      "--loops-only", "--rounds", str(args.rounds)],
                                     env=dict(os.environ, FLAKE8_XLA_CACHE_DIR=str(warm_engine)),
                                     capture_output=True, text=True, check=True)
                for line in out.stdout.splitlines():
                    if line.strip().startswith("xla/bugbear marginal"):
                        marginal[mode] = line.split(None, 2)[2].strip()
        report(got, marginal, args, corpus, torch, lsp_file)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


def _brief(value) -> str:
    if isinstance(value, dict):
        return (f"{value['cpu']:.2f} CPU s, {value['findings']} findings ({value['digest']})"
                + (f", cache {value['cache']}" if "cache" in value else ""))
    return ", ".join(f"{w * 1000:.0f} ms ({c * 1000:.0f} CPU ms)" for w, c, _ in value)


def _ratios(got, top: str, bottom: str) -> tuple[float, float, float]:
    vals = [a["cpu"] / b["cpu"] for a, b in zip(got[top], got[bottom])]
    return statistics.median(vals), min(vals), max(vals)


def report(got, marginal, args, corpus, torch, lsp_file) -> None:
    print(f"issue 28 cost rows: {args.rounds} rounds, CPython {sys.version.split()[0]}, "
          f"load average {os.getloadavg()[0]:.1f} at the end")
    print(f"pytorch/xla tree: {corpus}; torch: {torch}; LSP module: {lsp_file} "
          f"({len(lsp_file.read_text(encoding='utf-8').splitlines())} lines)")
    for name, runs in got.items():
        if runs and isinstance(runs[0], dict):
            print(f"  {name:12} CPU s {statistics.median(r['cpu'] for r in runs):7.2f}  findings "
                  f"{sorted({(r['findings'], r['digest']) for r in runs})}")
    rows = []

    def row(name, value, detail):
        limit = LIMITS[name]
        rows.append((name, value, limit, detail))

    med, lo, hi = _ratios(got, "engine cold", "engine off")
    row("engine, cold cache", med, f"{lo:.2f}..{hi:.2f}")
    med, lo, hi = _ratios(got, "engine warm", "engine off")
    row("engine, warm cache", med, f"{lo:.2f}..{hi:.2f}")
    if got.get("torch on"):
        med, lo, hi = _ratios(got, "torch on", "torch off")
        warm, wlo, whi = _ratios(got, "torch warm", "torch off")
        row("torch-free code", med, f"cold {lo:.2f}..{hi:.2f}, cache writes {got['torch on'][0]['cache']['writes']}; "
                                    f"warm {warm:.2f} ({wlo:.2f}..{whi:.2f})")
    if got.get("flake8 cold"):
        for kind in ("cold", "warm"):
            med, lo, hi = _ratios(got, f"flake8 {kind}", "flake8 off")
            row(f"flake8 -j1 --select=XLA, {kind} cache", med, f"{lo:.2f}..{hi:.2f}")
    if marginal.get("on"):
        value = float(marginal["on"].split()[0])
        row("XLA/bugbear marginal, project mode on", value,
            f"{marginal['on'].split(None, 1)[1]}; single-file mode: {marginal.get('off', '?')}")
    if got.get("lsp on"):
        on = [w for run in got["lsp on"] for w, _, _ in run]
        cpu = [c for run in got["lsp on"] for _, c, _ in run]
        off = [w for run in got["lsp off"] for w, _, _ in run]
        off_cpu = [c for run in got["lsp off"] for _, c, _ in run]
        row("LSP edit-to-diagnostics above the debounce (ms)", statistics.median(on) * 1000,
            f"{min(on) * 1000:.0f}..{max(on) * 1000:.0f}; server CPU {statistics.median(cpu) * 1000:.0f} ms; "
            f"xla-project off: {statistics.median(off) * 1000:.0f} ms ({statistics.median(off_cpu) * 1000:.0f} CPU ms)")
    if got.get("base cold"):
        print(f"  baseline {args.baseline}: engine cold {_ratios(got, 'base cold', 'engine off')[0]:.2f}, "
              f"warm {_ratios(got, 'base warm', 'engine off')[0]:.2f}"
              + (f", torch-free {_ratios(got, 'base torch', 'torch off')[0]:.2f}" if got.get("base torch") else "")
              + " (the same single-file runs as the rows)")
    print("| row | limit | measured (median) | range, notes | met |")
    print("|---|---|---|---|---|")
    for name, value, limit, detail in rows:
        fmt = f"{value:.0f}" if "ms" in name else f"{value:.2f}"
        print(f"| {name} | <= {limit} | {fmt} | {detail} | {'yes' if value <= limit else 'no'} |")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
