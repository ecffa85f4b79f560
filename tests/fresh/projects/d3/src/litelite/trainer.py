"""The Trainer: runs the loop and calls the module's hooks and the callbacks."""
import os

import torch


class Trainer:
    def __init__(self, strategy, max_epochs=1, callbacks=(), default_root_dir="checkpoints", seed=0):
        self.strategy = strategy
        self.max_epochs = max_epochs
        self.callbacks = list(callbacks)
        self.default_root_dir = default_root_dir
        self.seed = seed
        self.module = None
        self.optimizer = None
        self.global_step = 0
        self.history = {}

    def fit(self, module):
        os.makedirs(self.default_root_dir, exist_ok=True)
        self.strategy.launch(self._run, module)

    def _checkpoint(self, epoch):
        return {
            "epoch": epoch,
            "global_step": self.global_step,
            "state_dict": self.module.state_dict(),
            "optimizer": self.optimizer.state_dict(),
        }

    def _run(self, index, module):
        self.strategy.setup_environment(index)
        self.strategy.seed(self.seed)
        module.trainer = self
        self.optimizer = module.configure_optimizers()
        self.module = self.strategy.setup_module(module)
        train_loader = self.strategy.process_dataloader(self.module.train_dataloader())
        val_source = self.module.val_dataloader()
        val_loader = self.strategy.process_dataloader(val_source) if val_source is not None else None

        self.module.call_hook("train_start")
        for epoch in range(self.max_epochs):
            self.module.train()
            for batch_idx, batch in enumerate(train_loader):
                self.optimizer.zero_grad(set_to_none=True)
                loss = self.module.training_step(batch, batch_idx)
                loss.backward()
                for callback in self.callbacks:
                    callback(self, self.module)
                self.strategy.optimizer_step(self.optimizer)
                self.global_step += 1
                self.module.call_hook("train_batch_end", loss.detach(), batch, batch_idx)
            self.module.call_hook("train_epoch_end", epoch)

            if val_loader is not None:
                self.module.eval()
                with torch.no_grad():
                    for batch_idx, batch in enumerate(val_loader):
                        self.module.validation_step(batch, batch_idx)
                self.module.call_hook("validation_epoch_end", epoch)

            if self.strategy.is_global_zero:
                path = os.path.join(self.default_root_dir, f"epoch={epoch}.ckpt")
                self.strategy.save_checkpoint(self._checkpoint(epoch), path)  # expect: XLA602
        self.strategy.barrier("litelite.fit_end")
