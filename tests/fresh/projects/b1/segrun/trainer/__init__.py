from .factory import get_trainer

__all__ = ["get_trainer"]
