"""zoo: a registry of image models and trainers.

    from zoo import tasks            # registers the trainers
    from zoo.models import MODELS
    from zoo.registry import TRAINERS
"""
__version__ = "0.2.0"
