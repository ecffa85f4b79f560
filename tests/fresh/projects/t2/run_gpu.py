"""python run_gpu.py --epochs 10   (all local GPUs)"""
from backends import get_backend
from config import Config
from engine import train_worker

if __name__ == "__main__":
    get_backend("cuda").spawn(train_worker, Config.from_args())
