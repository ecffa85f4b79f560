from .base import Strategy


def get_strategy(name):
    if name == "xla":
        from .xla import XLAStrategy

        return XLAStrategy()
    if name == "ddp":
        from .ddp import DDPStrategy

        return DDPStrategy()
    return Strategy()
