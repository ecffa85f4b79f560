from .cuda_trainer import CUDATrainer


def get_trainer(flags, model, train_loader, val_loader):
    """Returns the trainer for the backend named in flags.device."""
    if flags.device == "xla":
        from .xla_trainer import XLATrainer
        return XLATrainer(flags, model, train_loader, val_loader)
    if flags.device == "cuda":
        return CUDATrainer(flags, model, train_loader, val_loader)
    raise ValueError(f"unknown device {flags.device}")
