"""Device environments. Import the backend module only when it is asked for."""


def get_env(cfg):
    if cfg.device == "tpu":
        from .tpu import TpuEnv

        return TpuEnv(cfg)
    if cfg.device == "cuda":
        from .cuda import CudaEnv

        return CudaEnv(cfg)
    raise ValueError(f"unsupported device {cfg.device!r}")
