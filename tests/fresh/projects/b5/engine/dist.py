import os


def world_info():
    """Rank and world size for the data pipeline."""
    world_size = int(os.environ.get("WORLD_SIZE", "1"))  # expect: XLA109
    rank = int(os.environ.get("RANK", "0"))  # expect: XLA109
    return rank, world_size
