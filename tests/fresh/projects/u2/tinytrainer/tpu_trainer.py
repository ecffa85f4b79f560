"""The TPU backend: one process per chip, sharded loaders, reduced gradients, xm.save."""
import os

import torch
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.runtime as xr
from torch.utils.data import DataLoader, DistributedSampler

from .trainer import Trainer


class TPUTrainer(Trainer):
    def __init__(self, model, args, train_dataset, eval_dataset=None, data_collator=None):
        self.device = xm.xla_device()  # expect: XLA804
        super().__init__(model.to(self.device), args, train_dataset, eval_dataset, data_collator)

    def is_world_process_zero(self):
        return xr.global_ordinal() == 0

    def is_local_process_zero(self):
        return xm.is_master_ordinal()

    def _sampler(self, dataset, shuffle):
        return DistributedSampler(dataset, num_replicas=xr.world_size(), rank=xr.global_ordinal(), shuffle=shuffle)

    def get_train_dataloader(self):
        loader = DataLoader(  # expect: XLA304
            self.train_dataset,
            batch_size=self.args.per_device_train_batch_size,
            sampler=self._sampler(self.train_dataset, shuffle=True),
            collate_fn=self.data_collator,
            num_workers=2,
        )
        return pl.MpDeviceLoader(loader, self.device)

    def get_eval_dataloader(self):
        loader = DataLoader(
            self.eval_dataset,
            batch_size=self.args.per_device_eval_batch_size,
            sampler=self._sampler(self.eval_dataset, shuffle=False),
            collate_fn=self.data_collator,
        )
        return pl.MpDeviceLoader(loader, self.device)

    def optimizer_step(self):
        # reduce first, so that the clip sees the global gradient
        xm.reduce_gradients(self.optimizer)
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.args.max_grad_norm)
        self.optimizer.step()

    def evaluate(self):
        metrics = super().evaluate()
        return {k: xm.mesh_reduce(k, v, lambda vals: sum(vals) / len(vals)) for k, v in metrics.items()}

    def _save(self, output_dir):
        os.makedirs(output_dir, exist_ok=True)
        xm.save(self.model.state_dict(), os.path.join(output_dir, "model.pt"))
        self._save_optimizer(output_dir)
        self._save_state(output_dir)
