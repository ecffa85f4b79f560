from .args import TrainingArguments
from .tpu_trainer import TPUTrainer
from .trainer import Trainer

__all__ = ["TrainingArguments", "Trainer", "TPUTrainer"]
