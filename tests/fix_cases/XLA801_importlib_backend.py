# A backend module that imports torch_xla only through importlib.import_module, inside its
# functions (the package works without torch_xla): the runtime module is imported right
# after, in the same function, so it is bound exactly when xm is (issue 30.6).
import importlib


def world_size():
    xm = importlib.import_module("torch_xla.core.xla_model")
    return xm.xrt_world_size()


def rank_and_size():
    xm = importlib.import_module("torch_xla.core.xla_model")
    return xm.get_ordinal(), xm.xrt_world_size()
