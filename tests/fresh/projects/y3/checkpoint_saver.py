"""Keeps the last N checkpoints and a copy of the best one."""
import os
import shutil

import torch


class CheckpointSaver:
    def __init__(self, model, optimizer, args=None, model_ema=None, checkpoint_dir="", max_history=3):
        self.model = model
        self.optimizer = optimizer
        self.args = args
        self.model_ema = model_ema
        self.checkpoint_dir = checkpoint_dir
        self.max_history = max_history
        self.checkpoint_files = []
        self.best_metric = None

    def save_checkpoint(self, epoch, metric=None):
        path = os.path.join(self.checkpoint_dir, f"checkpoint-{epoch}.pth.tar")
        self._save(path, epoch, metric)
        self.checkpoint_files.append(path)
        while len(self.checkpoint_files) > self.max_history:
            os.remove(self.checkpoint_files.pop(0))
        if metric is not None and (self.best_metric is None or metric > self.best_metric):
            self.best_metric = metric
            shutil.copyfile(path, os.path.join(self.checkpoint_dir, "model_best.pth.tar"))
        return self.best_metric

    def _save(self, path, epoch, metric=None):
        save_state = {
            "epoch": epoch,
            "arch": type(self.model).__name__,
            "state_dict": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
        }
        if self.args is not None:
            save_state["args"] = vars(self.args)
        if self.model_ema is not None:
            save_state["state_dict_ema"] = self.model_ema.module.state_dict()
        if metric is not None:
            save_state["metric"] = metric
        torch.save(save_state, path)  # expect: XLA601
