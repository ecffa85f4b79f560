"""Classification metrics accumulated batch by batch."""


class Accuracy:
    def __init__(self, topk=1):
        self.topk = topk
        self.correct = 0
        self.total = 0

    def update(self, logits, labels):
        top = logits.topk(self.topk, dim=-1).indices
        self.correct += (top == labels.unsqueeze(-1)).any(dim=-1).sum().item()  # expect: XLA501
        self.total += labels.numel()

    def compute(self):
        return self.correct / max(self.total, 1)

    def reset(self):
        self.correct = 0
        self.total = 0
