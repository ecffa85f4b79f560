"""Code shared by the GPU (gpu_main.py) and TPU (tpu_main.py) entry points."""
