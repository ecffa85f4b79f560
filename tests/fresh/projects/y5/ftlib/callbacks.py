"""Trainer callbacks: logging, periodic checkpoints, and a push to the model hub at the end."""
from huggingface_hub import upload_folder


class TrainerCallback:
    def on_train_begin(self, trainer):
        pass

    def on_step_end(self, trainer, logs):
        pass

    def on_train_end(self, trainer):
        pass


class LoggingCallback(TrainerCallback):
    def __init__(self, every):
        self.every = every

    def on_step_end(self, trainer, logs):
        if trainer.is_world_process_zero() and logs["step"] % self.every == 0:
            print(f"step {logs['step']} epoch {logs['epoch']}: loss {logs['loss']:.4f}")


class CheckpointCallback(TrainerCallback):
    def __init__(self, output_dir, save_steps):
        self.output_dir = output_dir
        self.save_steps = save_steps

    def on_step_end(self, trainer, logs):
        if logs["step"] % self.save_steps == 0:
            trainer.save_model(f"{self.output_dir}/checkpoint-{logs['step']}")


class PushToHubCallback(TrainerCallback):
    def __init__(self, repo_id, output_dir):
        self.repo_id = repo_id
        self.output_dir = output_dir

    def on_train_end(self, trainer):
        trainer.save_model(self.output_dir)
        if trainer.is_local_process_zero():  # expect: XLA604
            upload_folder(repo_id=self.repo_id, folder_path=self.output_dir, commit_message="end of training")
