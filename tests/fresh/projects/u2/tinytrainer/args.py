from dataclasses import dataclass


@dataclass
class TrainingArguments:
    output_dir: str
    per_device_train_batch_size: int = 32
    per_device_eval_batch_size: int = 64
    learning_rate: float = 3e-4
    weight_decay: float = 0.01
    num_train_epochs: int = 3
    max_grad_norm: float = 1.0
    logging_steps: int = 20
    save_every_epochs: int = 1
    report_to: str = "none"
    run_name: str = "run"
