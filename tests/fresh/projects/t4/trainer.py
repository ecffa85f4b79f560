import torch.nn.functional as F
import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr

from events import emit


class StepTrainer:
    def __init__(self, model, optimizer, plugins, scheduler=None):
        self.model = model
        self.optimizer = optimizer
        self.plugins = plugins
        self.scheduler = scheduler
        self.global_step = 0
        self.last_loss = None

    @property
    def is_main(self):
        return xr.global_ordinal() == 0

    def save(self, path):
        xm.save({"model": self.model.state_dict(), "step": self.global_step}, path)

    def train_step(self, tokens, targets):
        self.optimizer.zero_grad(set_to_none=True)
        logits = self.model(tokens)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        loss.backward()
        xm.optimizer_step(self.optimizer)
        if self.scheduler is not None:
            self.scheduler.step()
        return loss

    def fit(self, loader, epochs):
        self.plugins.train_start(self)
        for epoch in range(epochs):
            self.model.train()
            for step, (tokens, targets) in enumerate(loader):
                loss = self.train_step(tokens, targets)
                self.global_step += 1
                self.last_loss = loss.detach()
                self.plugins.step_end(self, step, loss)
                emit("step_end", step=self.global_step, loss=loss)
            self.plugins.epoch_end(self, epoch)
            emit("epoch_end", epoch=epoch, steps=self.global_step)
