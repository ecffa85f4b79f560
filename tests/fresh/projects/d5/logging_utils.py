"""Buffered scalar logging to stdout and a JSON-lines file."""
import json
import os
from collections import defaultdict


class MetricLogger:
    def __init__(self, out_dir, every=20, rank=0):
        self.every = every
        self.rank = rank
        self.buffer = defaultdict(list)
        self.path = os.path.join(out_dir, f"metrics.rank{rank}.jsonl")

    def log_scalar(self, name, value, step):
        self.buffer[name].append(value.item() if hasattr(value, "item") else value)  # expect: XLA501
        if step % self.every == 0:
            self.flush(step)

    def flush(self, step):
        row = {"step": step, **{k: sum(v) / len(v) for k, v in self.buffer.items() if v}}
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(json.dumps(row) + "\n")
        if self.rank == 0:
            print(" ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()))
        self.buffer.clear()
