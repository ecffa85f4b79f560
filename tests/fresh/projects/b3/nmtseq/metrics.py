from collections import defaultdict

_AGG = defaultdict(lambda: [0.0, 0])


def log_scalar(key, value, weight=1):
    agg = _AGG[key]
    agg[0] += float(value) * weight  # expect: XLA501
    agg[1] += weight


def smoothed(key):
    total, n = _AGG[key]
    return total / max(n, 1)


def reset():
    _AGG.clear()
