"""s2s: seq2seq fine-tuning with a backend-agnostic loop and a TPU mixin."""
