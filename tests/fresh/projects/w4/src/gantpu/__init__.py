"""gantpu: a DCGAN with hinge loss, trained data-parallel on TPU."""
from .nets import Discriminator, Generator
from .utils import save_checkpoint, set_seed

try:
    from .train import train_worker
except ImportError:  # CPU-only install without torch_xla: sampling still works
    train_worker = None

__all__ = ["Discriminator", "Generator", "save_checkpoint", "set_seed", "train_worker"]
