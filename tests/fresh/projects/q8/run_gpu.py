"""GPU entry point: torchrun --nproc_per_node=8 run_gpu.py"""
from engine import CONFIG, run
from strategies import get_strategy

if __name__ == "__main__":
    run(get_strategy("cuda", grad_clip=1.0), CONFIG)
