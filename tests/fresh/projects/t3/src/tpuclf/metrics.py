class Accuracy:
    """Top-1 accuracy accumulated over an epoch."""

    def __init__(self):
        self.correct = 0
        self.total = 0

    def update(self, logits, labels):
        self.correct += (logits.argmax(dim=1) == labels).sum().item()  # expect: XLA501
        self.total += labels.size(0)

    def compute(self):
        return self.correct / max(self.total, 1)
