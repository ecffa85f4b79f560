"""fairseq-style toolkit: tasks, models and criterions are looked up by name in registries filled by decorators."""
TASK_REGISTRY = {}
MODEL_REGISTRY = {}
CRITERION_REGISTRY = {}


def _register(registry, name):
    def wrapper(cls):
        if name in registry:
            raise ValueError(f"cannot register duplicate name {name}")
        registry[name] = cls
        return cls

    return wrapper


def register_task(name):
    return _register(TASK_REGISTRY, name)


def register_model(name):
    return _register(MODEL_REGISTRY, name)


def register_criterion(name):
    return _register(CRITERION_REGISTRY, name)


def setup_task(cfg):
    return TASK_REGISTRY[cfg.task].setup_task(cfg)


def build_model(cfg, task):
    return MODEL_REGISTRY[cfg.arch].build_model(cfg, task)


def build_criterion(cfg, task):
    return CRITERION_REGISTRY[cfg.criterion].build_criterion(cfg, task)
