"""ViT-B/16 ImageNet pre-training on a TPU v4-32 pod slice, with XLA FSDP."""
__version__ = "0.3.0"
