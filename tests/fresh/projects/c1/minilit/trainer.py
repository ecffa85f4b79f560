"""Trainer: owns the strategy, the callbacks and the fit loop."""
from .loops import FitLoop
from .strategies import Strategy, XLAStrategy


class Trainer:
    def __init__(self, accelerator="cpu", devices=1, max_epochs=1, callbacks=None, gradient_clip_val=None,
                 default_root_dir="checkpoints"):
        if accelerator == "tpu":
            self.strategy = XLAStrategy(self, devices=devices)
        else:
            self.strategy = Strategy(self)
        self.callbacks = list(callbacks or [])
        self.gradient_clip_val = gradient_clip_val
        self.default_root_dir = default_root_dir
        self.fit_loop = FitLoop(self, max_epochs)
        self.current_epoch = 0
        self.global_step = 0
        self.progress_bar_metrics = {}
        self.lightning_module = None

    def is_global_zero(self):
        return self.strategy.is_global_zero()

    def fit(self, model):
        launcher = self.strategy.launcher
        if launcher is not None:
            launcher.launch(self._run_stage, model)
        else:
            self._run_stage(model)

    def _run_stage(self, model):
        self.strategy.setup_environment()
        model.trainer = self
        self.lightning_module = self.strategy.setup_model(model)
        optimizer = self.lightning_module.configure_optimizers()
        self.fit_loop.run(self.lightning_module, optimizer)

    def save_checkpoint(self, path):
        checkpoint = {
            "state_dict": self.lightning_module.state_dict(),
            "epoch": self.current_epoch,
            "global_step": self.global_step,
        }
        self.strategy.save_checkpoint(checkpoint, path)
