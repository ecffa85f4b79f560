"""flake8-xla: find PyTorch/XLA porting mistakes statically (flake8 plugin, same engine for pylint).

``%load_ext flake8_xla`` in IPython / Jupyter loads the notebook extension
(:mod:`flake8_xla.ipython`: ``%xla_lint``, ``%%xla_lint``, ``%xla_lint --on``)."""

__version__ = "0.1.0"
#: the project's home: its source, issues and, at each release tag ``v<version>``, the docs that
#: release ships (``docs/``). The one place it is written: the package metadata (setup.py), the
#: index page's links and the default rule URLs (:data:`flake8_xla.settings.DEFAULT_DOCS_URL`)
#: are made from it.
__url__ = "https://github.com/flake8-xla/flake8-xla"


def docs_url(path: str = "") -> str:
    """The URL of ``path`` (``docs/index.md``, ``README.md#install``) in this release's tree,
    where its docs are published: the repository at the tag ``v<__version__>``."""
    return f"{__url__}/blob/v{__version__}/{path}"


def load_ipython_extension(shell):
    """IPython's hook for ``%load_ext flake8_xla`` (see :mod:`flake8_xla.ipython`)."""
    from .ipython import load_ipython_extension as load

    return load(shell)


def unload_ipython_extension(shell):
    """IPython's hook for ``%unload_ext flake8_xla``."""
    from .ipython import unload_ipython_extension as unload

    unload(shell)
