from .callbacks import Callback, LossMonitor, ModelCheckpoint, ProgressBar
from .module import LightningModule
from .trainer import Trainer

__all__ = ["Callback", "LightningModule", "LossMonitor", "ModelCheckpoint", "ProgressBar", "Trainer"]
