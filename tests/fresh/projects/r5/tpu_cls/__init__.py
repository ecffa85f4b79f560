"""Image classification on Cloud TPU with a plugin system.

`tpu_cls.data` and `tpu_cls.model` have no TPU dependency and are shared with
the CPU evaluation script.
"""
__version__ = "0.4.1"
