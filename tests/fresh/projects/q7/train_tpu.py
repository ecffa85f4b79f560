"""Pre-train TinyLM on a TPU VM: python train_tpu.py"""
import torch
import torch_xla
import torch_xla.runtime as xr

from lightkit import TrainerConfig
from lightkit.tpu import TPUTrainer, num_devices
from models import TinyLM, TokenFileDataset


def _mp_fn(index, cfg, data_path):
    torch.manual_seed(1234 + xr.global_ordinal())  # expect: XLA205
    torch_xla.manual_seed(1234)
    model = TinyLM(vocab_size=32000, dim=256, layers=4, dropout=0.1)
    train_ds = TokenFileDataset(data_path, seq_len=128)
    trainer = TPUTrainer(model, train_ds, cfg)
    trainer.fit()


if __name__ == "__main__":
    cfg = TrainerConfig(batch_size=16, epochs=2, output_dir="runs/tpu")
    print(f"launching on {num_devices()} TPU chips")  # expect: XLA003
    torch_xla.launch(_mp_fn, args=(cfg, "data/tokens.bin"))
