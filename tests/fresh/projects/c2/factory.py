"""Everything the training function needs, already prepared by the accelerator."""
import torch

from data import build_eval_loader, build_train_loader
from model import TextClassifier


def build_everything(cfg, accelerator):
    model = TextClassifier(cfg.vocab_size, cfg.dim, cfg.num_classes)
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=0.01)  # expect: XLA405
    train_loader = build_train_loader(cfg, accelerator.num_processes(), accelerator.process_index())
    eval_loader = build_eval_loader(cfg, accelerator.num_processes(), accelerator.process_index())
    model, optimizer, train_loader = accelerator.prepare(model, optimizer, train_loader)
    eval_loader = accelerator.prepare_data_loader(eval_loader)
    return model, optimizer, train_loader, eval_loader
