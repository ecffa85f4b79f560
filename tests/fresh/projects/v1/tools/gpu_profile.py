"""Quick single-GPU throughput check of the model (never run on TPU hosts)."""
import sys
import time

import torch

sys.path.insert(0, ".")
from models.convnet import SmallConvNet  # noqa: E402
from utils.misc import cuda_sync  # noqa: E402


def main():
    model = SmallConvNet().cuda().eval()
    x = torch.randn(256, 3, 32, 32, device="cuda")
    with torch.no_grad():
        for _ in range(5):
            model(x)
        cuda_sync()
        t0 = time.perf_counter()
        for _ in range(20):
            model(x)
        cuda_sync()
        dt = time.perf_counter() - t0
    print(f"{20 * 256 / dt:.1f} img/s")


if __name__ == "__main__":
    main()
