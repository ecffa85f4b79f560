"""TPU subclass: device placement, sharded loading, reduced-gradient step, xm.save."""
import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.runtime as xr
from torch.utils.data import DataLoader

from .sampler import ShardSampler
from .trainer import Trainer


class TpuTrainer(Trainer):
    def __init__(self, model, args, train_dataset, eval_dataset=None, callbacks=()):
        super().__init__(model, args, train_dataset, eval_dataset, callbacks)
        self.device = torch_xla.device()
        self.model.to(self.device)

    def is_world_process_zero(self):
        return xr.global_ordinal() == 0

    def is_local_process_zero(self):
        return xm.is_master_ordinal()

    def get_train_dataloader(self):
        sampler = ShardSampler(self.train_dataset, shuffle=True, seed=self.args.seed)
        loader = DataLoader(self.train_dataset, batch_size=self.args.per_device_train_batch_size, sampler=sampler,
                            num_workers=2, drop_last=True)
        return pl.MpDeviceLoader(loader, self.device)

    def optimizer_step(self):
        xm.reduce_gradients(self.optimizer)
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.args.max_grad_norm)
        self.optimizer.step()

    def save_model(self, output_dir):
        xm.save(self.model.state_dict(), f"{output_dir}/pytorch_model.bin")

    def evaluate(self):
        loader = DataLoader(self.eval_dataset, batch_size=self.args.per_device_eval_batch_size,
                            sampler=ShardSampler(self.eval_dataset, shuffle=False))
        self.model.eval()
        total = torch.zeros((), device=self.device)
        batches = 0
        with torch.no_grad():
            for inputs in loader:
                inputs = {k: v.to(self.device) for k, v in inputs.items()}
                total += self.model(**inputs)["loss"]
                batches += 1
                xm.mark_step()  # expect: XLA805
        return xm.mesh_reduce("eval_loss", total.item() / max(batches, 1), lambda vals: sum(vals) / len(vals))
