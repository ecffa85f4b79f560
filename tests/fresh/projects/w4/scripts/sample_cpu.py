"""Draw samples from a trained generator on a laptop: python scripts/sample_cpu.py runs/dcgan/last.pt"""
import sys

import numpy as np
import torch
from PIL import Image

from gantpu import Generator, set_seed


def main(path, n=16, nz=128):
    set_seed(0)
    gen = Generator(nz)
    gen.load_state_dict(torch.load(path, map_location="cpu")["gen"])
    gen.eval()
    with torch.no_grad():
        imgs = gen(torch.randn(n, nz))
    for i, img in enumerate(imgs):
        arr = ((img.permute(1, 2, 0).numpy() + 1.0) * 127.5).clip(0, 255).astype(np.uint8)
        Image.fromarray(arr).save(f"sample_{i:02d}.png")
        print(f"sample {i}: mean pixel {img.mean().item():.3f}")


if __name__ == "__main__":
    main(sys.argv[1])
