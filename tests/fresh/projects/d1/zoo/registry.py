"""Name -> class tables, filled by decorators when the defining module is imported."""

TRAINERS = {}


def register(table, name):
    def decorator(obj):
        if name in table:
            raise KeyError(f"{name!r} is already registered to {table[name]!r}")
        table[name] = obj
        return obj

    return decorator


def register_trainer(name):
    return register(TRAINERS, name)


def available():
    return sorted(TRAINERS)
