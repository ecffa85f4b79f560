"""TPU entry point: PJRT_DEVICE=TPU python run_tpu.py"""
import torch_xla

from engine import CONFIG, run
from strategies import get_strategy


def _mp_fn(index, cfg):
    strategy = get_strategy("xla", grad_clip=1.0)
    run(strategy, cfg)


if __name__ == "__main__":
    torch_xla.launch(_mp_fn, args=(CONFIG,))
