"""moe: a mixture-of-experts LM trained with PyTorch/XLA SPMD."""
