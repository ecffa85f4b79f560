"""Trainer: moves the model, owns the optimizer and runs one update per list of samples."""
import os

import torch
import torch_xla
import torch_xla.distributed.parallel_loader as pl


def save_state(filename, cfg, model, optimizer, num_updates):
    state = {
        "cfg": vars(cfg),
        "model": model.state_dict(),
        "last_optimizer_state": optimizer.state_dict(),
        "num_updates": num_updates,
    }
    os.makedirs(os.path.dirname(filename) or ".", exist_ok=True)
    torch.save(state, filename)  # expect: XLA601


class Trainer:
    def __init__(self, cfg, task, model, criterion):
        self.cfg = cfg
        self.task = task
        self.device = torch_xla.device()
        self.model = model.to(self.device)
        self.criterion = criterion.to(self.device)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=cfg.lr, betas=(0.9, 0.98), eps=1e-8)
        self._num_updates = 0

    def get_num_updates(self):
        return self._num_updates

    def wrap_iterator(self, itr):
        return pl.MpDeviceLoader(itr, self.device)

    def train_step(self, samples):
        logging_outputs = []
        for i, sample in enumerate(samples):
            ignore_grad = sample is None
            _, _, logging_output = self.task.train_step(sample, self.model, self.criterion, self.optimizer, ignore_grad)
            logging_outputs.append(logging_output)
        self.optimizer.step()  # expect: XLA201
        self.optimizer.zero_grad(set_to_none=True)
        self._num_updates += 1
        torch_xla.sync()
        return self._reduce_logs(logging_outputs)

    def valid_step(self, sample):
        _, _, logging_output = self.task.valid_step(sample, self.model, self.criterion)
        return logging_output

    def _reduce_logs(self, logging_outputs):
        total = sum(log["loss"] for log in logging_outputs)
        ntokens = sum(log["ntokens"] for log in logging_outputs)
        return {"loss": total / max(ntokens, 1), "ntokens": ntokens}

    def save_checkpoint(self, filename):
        save_state(filename, self.cfg, self.model, self.optimizer, self._num_updates)
