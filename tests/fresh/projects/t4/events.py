"""A tiny event bus: functions subscribe to an event name with @on(...), emit() calls them."""
from collections import defaultdict

_HANDLERS = defaultdict(list)


def on(event):
    def register(fn):
        _HANDLERS[event].append(fn)
        return fn

    return register


def emit(event, **payload):
    for fn in _HANDLERS[event]:
        fn(**payload)
