"""The epoch/step loop every task class inherits. Subclasses fill in the hooks."""


class TrainLoopMixin:
    """Expects `self.model`, `self.optimizer` and `self.train_loader` on the host class."""

    def training_step(self, batch):
        raise NotImplementedError

    def after_backward(self, step):
        """Hook between backward and the update (clipping, gradient reduction, ...)."""

    def log_metrics(self, step, loss):
        pass

    def on_epoch_end(self, epoch):
        pass

    def fit(self, epochs):
        for epoch in range(epochs):
            self.model.train()
            for step, batch in enumerate(self.train_loader):
                self.optimizer.zero_grad()
                loss = self.training_step(batch)
                loss.backward()
                self.after_backward(step)
                self.optimizer.step()  # expect: XLA207
                self.log_metrics(step, loss)
            self.on_epoch_end(epoch)
