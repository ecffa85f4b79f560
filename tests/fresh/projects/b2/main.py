import argparse

import torch
import torch_xla
import torch_xla.runtime as xr
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from models import MODEL_DICT
from trainers import TRAINER_DICT
from utils.constants import XLA_RANK, XLA_WORLD, seed_everything
from utils.logging_utils import init_tracking


def load_split(path):
    return torch.load(path)


def _mp_fn(index, args):
    seed_everything(args.seed)
    init_tracking(args)
    dataset = load_split(args.data)
    sampler = DistributedSampler(dataset, num_replicas=XLA_WORLD(), rank=XLA_RANK(), shuffle=True)
    loader = DataLoader(dataset, batch_size=args.batch_size, sampler=sampler, drop_last=True)
    model = MODEL_DICT[args.model]()
    trainer = TRAINER_DICT[args.model](args, model, loader)
    trainer.train()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", choices=sorted(MODEL_DICT), default="lm")
    parser.add_argument("--data", required=True)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out-dir", default="ckpt")
    parser.add_argument("--project", default="xlm-zoo")
    parser.add_argument("--run-name", default=None)
    args = parser.parse_args()
    print(f"launching on {xr.world_size()} TPU cores")  # expect: XLA003
    torch_xla.launch(_mp_fn, args=(args,))
