"""Accelerator factory: one object per back-end with the same methods."""


def get_accelerator(name):
    if name == "tpu":
        from .tpu import TPUAccelerator

        return TPUAccelerator()
    if name == "cuda":
        from .gpu import GPUAccelerator

        return GPUAccelerator()
    raise ValueError(f"unknown backend {name!r}")
