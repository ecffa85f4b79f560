"""Shared helpers: distributed queries (dist.py) and logging (logging.py)."""
