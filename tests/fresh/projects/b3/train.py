import argparse
import time

from nmtseq import checkpoint_utils, distributed_utils, metrics
from nmtseq.tasks import setup_task
from nmtseq.trainer import Trainer


def build_model(args):
    import torch.nn as nn

    class Seq2Seq(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(1000, 256)
            self.core = nn.Transformer(256, 4, 2, 2, 1024, batch_first=True)
            self.out = nn.Linear(256, 1000)

        def forward(self, src, prev):
            return self.out(self.core(self.emb(src), self.emb(prev)))

    return Seq2Seq()


def train(args, trainer, task, epoch):
    itr = task.batches(epoch)
    if args.tpu:
        import torch_xla.distributed.parallel_loader as pl
        itr = pl.ParallelLoader(itr, [trainer.device]).per_device_loader(trainer.device)
    for i, samples in enumerate(itr):
        start = time.perf_counter()
        log = trainer.train_step(samples)
        step_time = time.perf_counter() - start  # expect: XLA504
        metrics.log_scalar("loss", log["loss"], log["ntokens"])
        metrics.log_scalar("step_time", step_time)
    print(f"epoch {epoch} loss {metrics.smoothed('loss'):.3f}")
    metrics.reset()


def main(args):
    task = setup_task(args)
    trainer = Trainer(args, task, build_model(args))
    for epoch in range(1, args.max_epoch + 1):
        train(args, trainer, task, epoch)
        checkpoint_utils.save_checkpoint(args, trainer, epoch)


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--task", default="translation")
    p.add_argument("--tpu", action="store_true")
    p.add_argument("--lr", type=float, default=5e-4)
    p.add_argument("--clip-norm", type=float, default=0.1)
    p.add_argument("--max-epoch", type=int, default=10)
    p.add_argument("--max-sentences", type=int, default=64)
    p.add_argument("--updates-per-epoch", type=int, default=1000)
    p.add_argument("--save-dir", default="checkpoints")
    p.add_argument("--distributed-world-size", type=int, default=1)
    p.add_argument("--distributed-rank", type=int, default=0)
    p.add_argument("--distributed-init-method", default="tcp://localhost:12345")
    distributed_utils.call_main(p.parse_args(), main)
