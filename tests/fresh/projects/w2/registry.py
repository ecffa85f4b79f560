"""Name -> class registry, filled by the @register decorator at import time."""
_REGISTRY = {}


def register(name):
    def deco(cls):
        _REGISTRY[name] = cls
        return cls

    return deco


def build(name, *args, **kwargs):
    if name not in _REGISTRY:
        raise KeyError(f"unknown runner {name!r}; known: {sorted(_REGISTRY)}")
    return _REGISTRY[name](*args, **kwargs)
