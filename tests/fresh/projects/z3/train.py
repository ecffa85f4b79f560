"""python train.py --data data-bin/wmt16 --tpu    (or without --tpu on GPUs)"""
import argparse
import logging

import torch.distributed as dist
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from fairlite import distributed_utils
from fairlite.tasks import TranslationTask
from fairlite.trainer import Trainer

logger = logging.getLogger("fairlite.train")


def get_train_iterator(cfg, task, epoch):
    dataset = task.load_dataset("train")
    sampler = DistributedSampler(dataset, num_replicas=dist.get_world_size(), rank=dist.get_rank(), seed=cfg.seed)
    sampler.set_epoch(epoch)
    loader = DataLoader(dataset, batch_size=cfg.batch_size, sampler=sampler, collate_fn=dataset.collater,
                        drop_last=True, num_workers=2)
    if cfg.tpu:
        import torch_xla
        import torch_xla.distributed.parallel_loader as pl

        device = torch_xla.device()
        return pl.ParallelLoader(loader, [device]).per_device_loader(device)
    return loader


def main(cfg):
    task = TranslationTask(cfg)
    trainer = Trainer(cfg, task, task.build_model(), task.build_criterion())
    for epoch in range(1, cfg.max_epoch + 1):
        for i, sample in enumerate(get_train_iterator(cfg, task, epoch)):
            stats = trainer.train_step(sample)
            if i % cfg.log_interval == 0:
                logger.info("epoch %03d | update %05d | loss %.3f | ntokens %d", epoch, i, stats["loss"], stats["ntokens"])
        trainer.save_checkpoint(f"{cfg.save_dir}/checkpoint{epoch}.pt", {"epoch": epoch})


def cli_main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True)
    p.add_argument("--tpu", action="store_true")
    p.add_argument("--cpu", action="store_true")
    p.add_argument("--distributed-world-size", dest="distributed_world_size", type=int, default=8)
    p.add_argument("--init-method", dest="init_method", default="env://")
    p.add_argument("--vocab-size", dest="vocab_size", type=int, default=32000)
    p.add_argument("--label-smoothing", dest="label_smoothing", type=float, default=0.1)
    p.add_argument("--lr", type=float, default=5e-4)
    p.add_argument("--clip-norm", dest="clip_norm", type=float, default=0.1)
    p.add_argument("--batch-size", dest="batch_size", type=int, default=64)
    p.add_argument("--max-epoch", dest="max_epoch", type=int, default=10)
    p.add_argument("--log-interval", dest="log_interval", type=int, default=100)
    p.add_argument("--empty-cache-freq", dest="empty_cache_freq", type=int, default=0)
    p.add_argument("--save-dir", dest="save_dir", default="checkpoints")
    p.add_argument("--seed", type=int, default=1)
    distributed_utils.call_main(p.parse_args(), main)


if __name__ == "__main__":
    cli_main()
