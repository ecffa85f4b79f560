"""Callbacks and the handler that fires them, in `order`, at fixed points of Learner.fit."""


class Callback:
    order = 0

    def on_train_begin(self, learn):
        pass

    def on_epoch_begin(self, learn):
        pass

    def on_step_begin(self, learn):
        pass

    def after_backward(self, learn):
        pass

    def on_step_end(self, learn):
        pass

    def on_epoch_end(self, learn):
        pass

    def on_train_end(self, learn):
        pass


class CallbackHandler:
    def __init__(self, callbacks=()):
        self.callbacks = sorted(callbacks, key=lambda cb: cb.order)

    def add(self, cb):
        self.callbacks.append(cb)
        self.callbacks.sort(key=lambda c: c.order)

    def on_train_begin(self, learn):
        for cb in self.callbacks:
            cb.on_train_begin(learn)

    def on_epoch_begin(self, learn):
        for cb in self.callbacks:
            cb.on_epoch_begin(learn)

    def on_step_begin(self, learn):
        for cb in self.callbacks:
            cb.on_step_begin(learn)

    def after_backward(self, learn):
        for cb in self.callbacks:
            cb.after_backward(learn)

    def on_step_end(self, learn):
        for cb in self.callbacks:
            cb.on_step_end(learn)

    def on_epoch_end(self, learn):
        for cb in self.callbacks:
            cb.on_epoch_end(learn)

    def on_train_end(self, learn):
        for cb in self.callbacks:
            cb.on_train_end(learn)
