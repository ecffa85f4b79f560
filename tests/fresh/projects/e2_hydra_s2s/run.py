"""Fine-tune a T5-style model on a TPU VM.

    python run.py model=t5_base data.train_file=gs://my-bucket/train.jsonl trainer.max_steps=20000
"""
import logging

import hydra
import torch_xla
from hydra.utils import instantiate
from omegaconf import DictConfig, OmegaConf

from s2s.data import build_train_loader
from s2s.runtime import describe_hardware, setup_runtime
from s2s.task import Seq2SeqTrainer

log = logging.getLogger(__name__)


def _mp_fn(index, cfg):
    setup_runtime(cfg.runtime)
    model = instantiate(cfg.model)
    tokenizer = instantiate(cfg.tokenizer)
    trainer = Seq2SeqTrainer(model, tokenizer, cfg.trainer)
    trainer.fit(build_train_loader(cfg.data, tokenizer, trainer.device))


@hydra.main(version_base=None, config_path="conf", config_name="config")
def main(cfg: DictConfig):
    log.info("config:\n%s", OmegaConf.to_yaml(cfg))
    log.info("hardware: %s", describe_hardware())  # expect: XLA003
    torch_xla.launch(_mp_fn, args=(cfg,))


if __name__ == "__main__":
    main()
