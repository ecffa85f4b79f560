"""flake8-xla: find PyTorch/XLA porting mistakes statically (flake8 plugin, same engine for pylint)."""

__version__ = "0.1.0"
