"""PJRT_DEVICE=TPU python run_tpu.py --epochs 10"""
from backends import get_backend
from config import Config
from engine import train_worker


def main():
    cfg = Config.from_args()
    backend = get_backend("tpu")
    backend.spawn(train_worker, cfg)


if __name__ == "__main__":
    main()
