import os

import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr
import wandb


class Callback:
    def on_fit_start(self, engine):
        pass

    def on_step_end(self, engine):
        pass

    def on_epoch_end(self, engine):
        pass

    def on_fit_end(self, engine):
        pass


class WandbCallback(Callback):
    def __init__(self, project):
        self.project = project

    def on_fit_start(self, engine):
        if xm.is_master_ordinal():  # expect: XLA604
            wandb.init(project=self.project)

    def on_fit_end(self, engine):
        if xr.global_ordinal() == 0:
            wandb.finish()


class LossHistory(Callback):
    def __init__(self, every=50):
        self.every, self.history = every, []

    def on_step_end(self, engine):
        if engine.state.step % self.every == 0:
            self.history.append(engine.state.loss.item())  # expect: XLA507


class StepClosureLogger(Callback):
    def on_step_end(self, engine):
        xm.add_step_closure(self._log, args=(engine.state.step, engine.state.loss))

    def _log(self, step, loss):
        if step % 100 == 0:
            print(f"step {step} loss {loss.item():.4f}")


class Checkpoint(Callback):
    def __init__(self, directory):
        self.directory = directory

    def on_epoch_end(self, engine):
        path = os.path.join(self.directory, f"epoch{engine.state.epoch}.pt")
        if xr.global_ordinal() == 0:
            xm.save(engine.model.state_dict(), path)  # expect: XLA602
