"""Console logging for the Trainer, and Weights & Biases when report_to="wandb"."""
import logging

logger = logging.getLogger(__name__)


class LoggingMixin:
    _run = None

    def init_trackers(self):
        if self.args.report_to != "wandb":
            return
        if self.is_local_process_zero():  # expect: XLA604
            import wandb

            self._run = wandb.init(name=self.args.run_name, config=vars(self.args))

    def log(self, logs):
        logs = dict(logs, epoch=self.epoch, step=self.global_step)
        if self.is_world_process_zero():
            logger.info(logs)
        if self._run is not None:
            self._run.log(logs, step=self.global_step)

    def log_step(self, loss):
        if self.global_step % self.args.logging_steps == 0:
            lr = self.optimizer.param_groups[0]["lr"]
            self.log({"loss": round(loss.item(), 4), "lr": lr})  # expect: XLA507

    def finish_trackers(self):
        if self._run is not None:
            self._run.finish()
