import torch

from . import distributed_utils


class Trainer:
    def __init__(self, cfg, task, model, criterion):
        self.cfg = cfg
        self.task = task
        self.tpu = cfg.tpu
        self.cuda = torch.cuda.is_available() and not cfg.cpu and not self.tpu
        if self.tpu:
            import torch_xla

            self.device = torch_xla.device()
        elif self.cuda:
            self.device = torch.device("cuda")
        else:
            self.device = torch.device("cpu")
        self.model = model.to(self.device)
        self.criterion = criterion.to(self.device)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=cfg.lr, betas=(0.9, 0.98))
        self.num_updates = 0

    def train_step(self, sample):
        self.optimizer.zero_grad()
        loss, sample_size, _ = self.task.train_step(sample, self.model, self.criterion)
        distributed_utils.all_reduce_grads(self.model.parameters(), self.cfg)
        grad_norm = torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.cfg.clip_norm)
        if not torch.isfinite(grad_norm).all():  # expect: XLA502
            raise FloatingPointError("gradients are Nan/Inf")
        self.optimizer.step()
        self.num_updates += 1
        if self.cuda and self.cfg.empty_cache_freq > 0 and self.num_updates % self.cfg.empty_cache_freq == 0:
            torch.cuda.empty_cache()
        return self._reduce_and_log_stats(loss, sample_size)

    def _reduce_and_log_stats(self, loss, sample_size):
        return {"loss": float(loss) / max(sample_size, 1), "ntokens": sample_size}  # expect: XLA501

    def save_checkpoint(self, filename, extra_state):
        if distributed_utils.is_master(self.cfg):
            state = {"model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(),
                     "num_updates": self.num_updates, **extra_state}
            torch.save(state, filename)  # expect: XLA601
