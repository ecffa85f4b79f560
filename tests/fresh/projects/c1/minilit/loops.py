"""The fit loop: epochs, batches, hooks."""
import torch


class FitLoop:
    def __init__(self, trainer, max_epochs):
        self.trainer = trainer
        self.max_epochs = max_epochs

    def _call_hook(self, name, *args):
        for cb in self.trainer.callbacks:
            getattr(cb, name)(self.trainer, *args)

    def run(self, module, optimizer):
        trainer = self.trainer
        loader = trainer.strategy.process_dataloader(module.train_dataloader())
        self._call_hook("on_fit_start", module)
        for epoch in range(self.max_epochs):
            trainer.current_epoch = epoch
            module.train()
            self._call_hook("on_train_epoch_start", module)
            for batch_idx, batch in enumerate(loader):
                optimizer.zero_grad(set_to_none=True)
                outputs = module.training_step(batch, batch_idx)
                loss = outputs["loss"]
                loss.backward()
                if trainer.gradient_clip_val:
                    torch.nn.utils.clip_grad_norm_(module.parameters(), trainer.gradient_clip_val)  # expect: XLA203
                trainer.strategy.optimizer_step(optimizer)
                trainer.global_step += 1
                for cb in trainer.callbacks:
                    cb.on_train_batch_end(trainer, module, outputs, batch_idx)
            trainer.strategy.barrier("epoch-end")
            self._call_hook("on_train_epoch_end", module)
