"""Backend registry. Backends are imported lazily so a GPU box never imports torch_xla."""
from .base import Backend


def _cuda():
    from .cuda import CudaBackend

    return CudaBackend()


def _tpu():
    from .tpu import TpuBackend

    return TpuBackend()


_BACKENDS = {
    "cuda": _cuda,
    "tpu": _tpu,
}


def get_backend(name: str) -> Backend:
    try:
        factory = _BACKENDS[name]
    except KeyError:
        raise ValueError(f"unknown backend {name!r}; choose one of {sorted(_BACKENDS)}") from None
    return factory()
