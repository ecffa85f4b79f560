"""The Trainer owns the loops; the strategy decides devices, launching and reductions."""
import os
import time

from .strategies import SingleDeviceStrategy


def _fit_worker(index, trainer, module, datamodule):
    trainer.strategy.setup_environment(index)
    trainer._run_fit(module, datamodule)


class Trainer:
    def __init__(self, strategy=None, max_epochs=1, callbacks=None, default_root_dir="checkpoints"):
        self.strategy = strategy or SingleDeviceStrategy()
        self.max_epochs = max_epochs
        self.callbacks = list(callbacks or [])
        self.default_root_dir = default_root_dir
        self.current_epoch = 0
        self.global_step = 0
        self.optimizer = None

    @property
    def global_rank(self):
        return self.strategy.global_rank

    def fit(self, module, datamodule):
        os.makedirs(self.default_root_dir, exist_ok=True)
        self.strategy.launch(_fit_worker, self, module, datamodule)

    def _run_fit(self, module, datamodule):
        module = self.strategy.setup_module(module)
        self.optimizer = module.configure_optimizers()
        datamodule.setup("fit")
        train_loader = self.strategy.process_dataloader(datamodule.train_dataloader())
        val_loader = self.strategy.process_dataloader(datamodule.val_dataloader())
        for epoch in range(self.max_epochs):
            self.current_epoch = epoch
            module.train()
            t0 = time.perf_counter()
            for batch_idx, batch in enumerate(train_loader):
                self.optimizer.zero_grad()
                outputs = module.training_step(batch, batch_idx)
                self.strategy.backward(outputs["loss"])
                self.strategy.optimizer_step(self.optimizer)
                self.global_step += 1
                for cb in self.callbacks:
                    cb.on_train_batch_end(self, module, outputs, batch_idx)
            self.strategy.wait_for_device()
            epoch_time = time.perf_counter() - t0
            metrics = self._run_validation(module, val_loader)
            metrics["epoch_time"] = epoch_time
            for cb in self.callbacks:
                cb.on_validation_end(self, module, metrics)
        self.strategy.teardown()

    def _run_validation(self, module, val_loader):
        module.eval()
        total, count = 0.0, 0
        for batch_idx, batch in enumerate(val_loader):
            out = module.validation_step(batch, batch_idx)
            total += out["loss"].item()
            count += 1
        return {"val_loss": self.strategy.reduce(total / max(count, 1))}

    def save_checkpoint(self, filepath, module):
        checkpoint = {
            "state_dict": module.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "epoch": self.current_epoch,
            "global_step": self.global_step,
        }
        self.strategy.save_checkpoint(checkpoint, filepath)
