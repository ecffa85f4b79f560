"""Backend factory. The backend modules are imported lazily so that a GPU box never needs
torch_xla and a TPU VM never touches CUDA."""


def _load_tpu():
    from .tpu import TPUBackend

    return TPUBackend


def _load_cuda():
    from .cuda import CUDABackend

    return CUDABackend


_LOADERS = {"tpu": _load_tpu, "cuda": _load_cuda}


def get_backend(name, **kwargs):
    try:
        loader = _LOADERS[name]
    except KeyError:
        raise ValueError(f"unknown backend {name!r}; choose one of {sorted(_LOADERS)}") from None
    return loader()(**kwargs)
