from .accelerator import AcceleratedOptimizer, Accelerator
from .launchers import notebook_launcher
from .utils import is_torch_xla_available, set_seed
