"""Host-side token stream: each host reads its share of the .npy shards."""
import glob

import numpy as np
import torch
import torch_xla.runtime as xr


def host_files(pattern):
    files = sorted(glob.glob(pattern))
    return files[xr.global_ordinal()::xr.process_count()]  # expect: XLA902


def token_batches(pattern, global_batch, seq_len):
    """Yield (inputs, targets) of a fixed shape: (global_batch / hosts, seq_len)."""
    per_host = global_batch // xr.process_count()
    for path in host_files(pattern):
        arr = np.load(path, mmap_mode="r")
        windows = (len(arr) - 1) // seq_len
        for first in range(0, windows - per_host + 1, per_host):
            rows = [arr[(first + i) * seq_len : (first + i + 1) * seq_len + 1] for i in range(per_host)]
            chunk = torch.from_numpy(np.stack(rows).astype(np.int64))
            yield chunk[:, :-1], chunk[:, 1:]
