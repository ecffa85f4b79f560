"""Code shared by the torchrun (GPU) and the TPU entry scripts."""
