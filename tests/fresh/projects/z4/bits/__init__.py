import torch

from .device_env import DeviceEnv

_global_device_env = None


def is_xla_available():
    try:
        import torch_xla  # noqa: F401
    except ImportError:
        return False
    return True


def initialize_device(force_cpu=False, amp=False):
    global _global_device_env
    if force_cpu:
        denv = DeviceEnv()
    elif is_xla_available():
        from .device_env_xla import DeviceEnvXla

        denv = DeviceEnvXla(amp=amp)
    elif torch.cuda.is_available():
        from .device_env_cuda import DeviceEnvCuda

        denv = DeviceEnvCuda(amp=amp)
    else:
        denv = DeviceEnv()
    _global_device_env = denv
    return denv
