from engine.loop import Engine

__all__ = ["Engine"]
