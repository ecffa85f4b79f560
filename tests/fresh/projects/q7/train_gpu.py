"""torchrun --nproc_per_node=8 train_gpu.py"""
import torch

from lightkit import TrainerConfig
from lightkit.gpu import GPUTrainer
from models import TinyLM, TokenFileDataset


def main():
    torch.manual_seed(1234)
    cfg = TrainerConfig(batch_size=32, epochs=2, output_dir="runs/gpu")
    model = TinyLM(vocab_size=32000, dim=256, layers=4, dropout=0.1)
    trainer = GPUTrainer(model, TokenFileDataset("data/tokens.bin"), cfg)
    trainer.fit()
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
