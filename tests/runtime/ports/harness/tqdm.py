"""Stand-in for tqdm (not in the runtime venv): iterates what it wraps, as tqdm does."""


class tqdm:  # noqa: N801  (tqdm's own name)
    def __init__(self, iterable=None, *args, **kwargs):
        self.iterable = iterable

    def __iter__(self):
        return iter(self.iterable)

    def __len__(self):
        return len(self.iterable)

    def set_postfix(self, *args, **kwargs):
        pass

    def close(self):
        pass
