"""Batch prediction. The TPU trainer uses it for validation; serve_cpu.py for the HTTP service."""
import torch


def default_device():
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


class Predictor:
    def __init__(self, model, device):
        self.model = model
        self.device = device

    @torch.no_grad()
    def predict_batch(self, images):
        self.model.eval()
        logits = self.model(images.to(self.device))
        return logits.argmax(-1).cpu()

    @torch.no_grad()
    def predict_topk(self, images, k=5, min_prob=0.05):
        self.model.eval()
        probs = self.model(images.to(self.device)).softmax(-1)
        values, indices = probs.topk(k, dim=-1)
        keep = (values > min_prob).nonzero()
        return [(int(r), int(indices[r, c]), float(values[r, c])) for r, c in keep.tolist()]
