TASK_REGISTRY = {}


def register_task(name):
    def wrap(cls):
        TASK_REGISTRY[name] = cls
        return cls
    return wrap


def setup_task(args):
    return TASK_REGISTRY[args.task](args)


from nmtseq.tasks import translation  # noqa: E402,F401
