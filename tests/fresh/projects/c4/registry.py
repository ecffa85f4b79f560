"""Name -> class tables, filled by decorators at import time."""
MODELS = {}


def register_model(name):
    def decorator(cls):
        if name in MODELS:
            raise KeyError(f"model {name!r} registered twice")
        MODELS[name] = cls
        return cls

    return decorator


def build_model(name, cfg):
    try:
        cls = MODELS[name]
    except KeyError:
        raise KeyError(f"unknown model {name!r}; known: {sorted(MODELS)}") from None
    return cls(cfg)
