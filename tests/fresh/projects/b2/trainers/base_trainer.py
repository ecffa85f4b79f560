import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl

from utils.logging_utils import MetricTracker


class BaseTrainer:
    def __init__(self, args, model, loader):
        self.args = args
        self.device = torch_xla.device()
        self.model = model.to(self.device)
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=args.lr)
        self.loader = pl.MpDeviceLoader(loader, self.device)

    def compute_loss(self, batch):
        raise NotImplementedError

    def step_optimizer(self):
        self.optimizer.step()

    def train(self):
        for epoch in range(self.args.epochs):
            tracker = MetricTracker()
            self.model.train()
            for step, batch in enumerate(self.loader):
                self.optimizer.zero_grad()
                loss = self.compute_loss(batch)
                loss.backward()
                self.step_optimizer()
                tracker.add(loss)
            tracker.summary(epoch)
            xm.save(self.model.state_dict(), f"{self.args.out_dir}/epoch{epoch}.pt")
