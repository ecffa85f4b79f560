"""Gradient accumulation helper: scales each micro-batch loss and tracks the running mean."""


class GradAccumulator:
    def __init__(self, steps):
        self.steps = steps
        self.micro_steps = 0
        self.running = 0.0

    def backward(self, loss):
        (loss / self.steps).backward()
        self.micro_steps += 1
        self.running += loss.item()  # expect: XLA501

    def ready(self):
        return self.micro_steps % self.steps == 0

    def pop_mean(self):
        mean = self.running / self.steps
        self.running = 0.0
        return mean
