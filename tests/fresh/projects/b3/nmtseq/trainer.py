import torch
from torch.nn.parallel import DistributedDataParallel


class Trainer:
    def __init__(self, args, task, model):
        self.args, self.task = args, task
        self.tpu = getattr(args, "tpu", False)
        self.cuda = torch.cuda.is_available() and not self.tpu
        if self.tpu:
            import torch_xla.core.xla_model as xm
            self.device = xm.xla_device()  # expect: XLA804
        elif self.cuda:
            self.device = torch.device("cuda", args.device_id)
        else:
            self.device = torch.device("cpu")
        self._model = model.to(self.device)
        self.optimizer = torch.optim.Adam(self._model.parameters(), lr=args.lr, betas=(0.9, 0.98))
        if args.distributed_world_size > 1 and not self.tpu:
            self.model = DistributedDataParallel(self._model, device_ids=[args.device_id])
        else:
            self.model = self._model

    @property
    def is_data_parallel_master(self):
        return self.args.distributed_rank == 0

    def train_step(self, samples):
        self.model.train()
        self.optimizer.zero_grad()
        total_loss, ntokens = 0.0, 0
        for sample in samples:
            sample = {k: v.to(self.device) if torch.is_tensor(v) else v for k, v in sample.items()}
            loss, n = self.task.train_step(sample, self.model)
            total_loss, ntokens = total_loss + loss, ntokens + n
        if self.tpu:
            import torch_xla.core.xla_model as xm
            xm.reduce_gradients(self.optimizer)
        grad_norm = torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.args.clip_norm)
        if not torch.isfinite(grad_norm):  # expect: XLA502
            self.optimizer.zero_grad()
        self.optimizer.step()
        if self.tpu:
            xm.mark_step()  # expect: XLA805
        return {"loss": total_loss / ntokens, "ntokens": ntokens}
