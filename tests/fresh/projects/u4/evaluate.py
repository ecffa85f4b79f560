"""Validation perplexity of the student, averaged over all replicas."""
import math

import torch
import torch.nn.functional as F
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    nll_sum = torch.zeros((), device=device)
    tokens = torch.zeros((), device=device)
    for batch in pl.MpDeviceLoader(loader, device):
        logits = model(batch["input_ids"], batch["attention_mask"])
        mask = batch["attention_mask"][:, 1:].flatten().float()
        nll = F.cross_entropy(logits[:, :-1].flatten(0, 1), batch["input_ids"][:, 1:].flatten(), reduction="none")
        nll_sum += (nll * mask).sum()
        tokens += mask.sum()
    nll_sum = xm.all_reduce(xm.REDUCE_SUM, nll_sum)
    tokens = xm.all_reduce(xm.REDUCE_SUM, tokens)
    mean_nll = (nll_sum / tokens.clamp(min=1.0)).item()
    return mean_nll, math.exp(min(mean_nll, 20.0))
