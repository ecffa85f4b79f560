import argparse

import torch
import torch_xla.distributed.xla_multiprocessing as xmp
import wandb

from ft.data import TokenizedTextDataset
from ft.logging_utils import is_global_main_process, is_main_process, log_rank0
from ft.modeling import BagOfEmbeddingsClassifier
from ft.tpu_trainer import TPUTrainer
from ft.trainer import TrainingArguments


def parse():
    p = argparse.ArgumentParser()
    p.add_argument("--train", required=True)
    p.add_argument("--valid", required=True)
    p.add_argument("--vocab-size", type=int, default=30522)
    p.add_argument("--num-labels", type=int, default=4)
    p.add_argument("--output-dir", default="/tmp/ft-textcls")
    return p.parse_args()


def _mp_fn(index, cli):
    if is_main_process():  # expect: XLA604
        wandb.init(project="ft-textcls", config=vars(cli))
    args = TrainingArguments(output_dir=cli.output_dir)
    model = BagOfEmbeddingsClassifier(cli.vocab_size, cli.num_labels)
    trainer = TPUTrainer(
        model, args, TokenizedTextDataset(cli.train), eval_dataset=TokenizedTextDataset(cli.valid)
    )
    trainer.train()
    acc = trainer.evaluate()
    log_rank0(f"eval accuracy on this replica's pass: {acc:.4f}")
    if is_global_main_process():
        wandb.finish()


if __name__ == "__main__":
    torch.set_num_threads(1)
    xmp.spawn(_mp_fn, args=(parse(),))
