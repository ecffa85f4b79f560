"""Trainers in the layout of pytorch/xla examples/: one base class, one subclass per strategy."""
