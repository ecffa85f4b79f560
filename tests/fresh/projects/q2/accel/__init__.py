"""Pick the accelerator backend by name. Each backend module imports only its own stack."""


def get_backend(name):
    if name == "tpu":
        from .tpu import TPUBackend

        return TPUBackend()
    if name == "cuda":
        from .gpu import CUDABackend

        return CUDABackend()
    from .base import Backend

    return Backend()
