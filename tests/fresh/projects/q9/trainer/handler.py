class CallbackHandler:
    """Holds the callbacks and dispatches trainer events to them."""

    EVENTS = (
        "on_train_begin",
        "on_step_end",
        "on_epoch_end",
        "on_train_end",
    )

    def __init__(self, callbacks=None):
        self.callbacks = list(callbacks or [])

    def add(self, cb):
        self.callbacks.append(cb)

    def fire(self, event, trainer, **kwargs):
        if event not in self.EVENTS:
            raise KeyError(event)
        for cb in self.callbacks:
            hook = getattr(cb, event, None)
            if hook is not None:
                hook(trainer, **kwargs)
