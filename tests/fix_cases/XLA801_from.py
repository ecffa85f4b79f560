from torch_xla.core.xla_model import xrt_world_size, get_ordinal, get_local_ordinal


def info():
    return xrt_world_size(), get_ordinal(), get_local_ordinal()
