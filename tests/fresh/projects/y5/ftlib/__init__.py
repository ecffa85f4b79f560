"""ftlib: a compact HF-Trainer-like fine-tuning loop with a TPU subclass."""
