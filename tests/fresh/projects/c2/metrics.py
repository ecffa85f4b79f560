"""Metric helpers and experiment tracking (no torch_xla in here)."""


class MetricTracker:
    def __init__(self):
        self.correct = 0
        self.count = 0

    def update(self, logits, labels):
        preds = logits.argmax(dim=-1)
        self.correct += (preds == labels).sum().item()  # expect: XLA501
        self.count += labels.size(0)

    def compute(self):
        return self.correct / max(self.count, 1)

    def reset(self):
        self.correct = 0
        self.count = 0


def init_tracking(accelerator, cfg):
    if accelerator.is_main_process():  # expect: XLA604
        import wandb

        return wandb.init(project=cfg.project, name=cfg.run_name, config=vars(cfg))
    return None
