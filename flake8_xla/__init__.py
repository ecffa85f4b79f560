"""flake8-xla: find PyTorch/XLA porting mistakes statically (flake8 plugin, same engine for pylint).

``%load_ext flake8_xla`` in IPython / Jupyter loads the notebook extension
(:mod:`flake8_xla.ipython`: ``%xla_lint``, ``%%xla_lint``, ``%xla_lint --on``)."""

__version__ = "0.1.0"


def load_ipython_extension(shell):
    """IPython's hook for ``%load_ext flake8_xla`` (see :mod:`flake8_xla.ipython`)."""
    from .ipython import load_ipython_extension as load

    return load(shell)


def unload_ipython_extension(shell):
    """IPython's hook for ``%unload_ext flake8_xla``."""
    from .ipython import unload_ipython_extension as unload

    unload(shell)
