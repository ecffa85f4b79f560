"""fairseq-train style entry point.

    PJRT_DEVICE=TPU python train.py data-bin/wikitext-103 --task language_modeling --arch transformer_lm
"""
import argparse
import itertools

from fairseq_lite import build_criterion, build_model, distributed_utils, setup_task
from fairseq_lite import criterions, models, tasks  # noqa: F401  (fill the registries)
from fairseq_lite.trainer import Trainer


class GroupedIterator:
    """Groups consecutive batches into lists of `chunk_size` for gradient accumulation."""

    def __init__(self, iterable, chunk_size):
        self.itr = iter(iterable)
        self.chunk_size = chunk_size

    def __iter__(self):
        return self

    def __next__(self):
        chunk = list(itertools.islice(self.itr, self.chunk_size))
        if not chunk:
            raise StopIteration
        return chunk


def validate(cfg, trainer, task, dataset):
    itr = task.get_batch_iterator(
        dataset, cfg.batch_size, distributed_utils.get_world_size(), distributed_utils.get_rank(), shuffle=False
    )
    loss_sum, ntokens = 0.0, 0
    for sample in trainer.wrap_iterator(itr):
        log = trainer.valid_step(sample)
        loss_sum += log["loss"]
        ntokens += log["ntokens"]
    return loss_sum / max(ntokens, 1)


def main(cfg):
    task = setup_task(cfg)
    model = build_model(cfg, task)
    criterion = build_criterion(cfg, task)
    trainer = Trainer(cfg, task, model, criterion)
    train_ds = task.load_dataset("train")
    valid_ds = task.load_dataset("valid")
    itr = task.get_batch_iterator(
        train_ds, cfg.batch_size, distributed_utils.get_world_size(), distributed_utils.get_rank()
    )
    for epoch in range(1, cfg.max_epoch + 1):
        itr.sampler.set_epoch(epoch)
        for samples in GroupedIterator(trainer.wrap_iterator(itr), cfg.update_freq):
            stats = trainer.train_step(samples)
            if trainer.get_num_updates() % cfg.log_interval == 0 and distributed_utils.is_master():
                print(f"epoch {epoch:03d} | update {trainer.get_num_updates()} | loss {stats['loss']:.3f}")
            if trainer.get_num_updates() % cfg.save_interval_updates == 0:
                trainer.save_checkpoint(f"{cfg.save_dir}/checkpoint_{epoch}_{trainer.get_num_updates()}.pt")
                distributed_utils.barrier("mid_epoch_checkpoint")
        valid_loss = validate(cfg, trainer, task, valid_ds)
        print(f"epoch {epoch:03d} | valid on 'valid' subset | loss {valid_loss:.3f}")
        trainer.save_checkpoint(f"{cfg.save_dir}/checkpoint{epoch}.pt")


def get_parser():
    ap = argparse.ArgumentParser()
    ap.add_argument("data")
    ap.add_argument("--task", default="language_modeling")
    ap.add_argument("--arch", default="transformer_lm")
    ap.add_argument("--criterion", default="cross_entropy")
    ap.add_argument("--decoder-embed-dim", type=int, default=512)
    ap.add_argument("--decoder-layers", type=int, default=6)
    ap.add_argument("--decoder-heads", type=int, default=8)
    ap.add_argument("--tokens-per-sample", type=int, default=512)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--update-freq", type=int, default=4)
    ap.add_argument("--lr", type=float, default=5e-4)
    ap.add_argument("--max-epoch", type=int, default=10)
    ap.add_argument("--log-interval", type=int, default=100)
    ap.add_argument("--save-interval-updates", type=int, default=5000)
    ap.add_argument("--save-dir", default="checkpoints")
    return ap


if __name__ == "__main__":
    distributed_utils.call_main(get_parser().parse_args(), main)
