"""A small Fabric-like layer: a strategy owns the device logic and holds its launcher."""
