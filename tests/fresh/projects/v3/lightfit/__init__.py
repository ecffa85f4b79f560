from .loop import fit

__all__ = ["fit"]
