"""One entry point for both clusters.

GPU:  torchrun --nproc_per_node=8 run.py
TPU:  PJRT_DEVICE=TPU python run.py
"""
from common.utils import on_tpu

CONFIG = {
    "data": "/data/enwik8/train_1024.pt",
    "batch_size": 64,
    "epochs": 5,
    "lr": 2e-3,
    "seed": 1234,
}

if __name__ == "__main__":
    if on_tpu():
        from tpu_main import launch

        launch(CONFIG)
    else:
        from gpu_main import main

        main(CONFIG)
