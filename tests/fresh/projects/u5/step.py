"""The training step shared by the single-device debug run and the pod run."""
import torch
import torch.nn.functional as F


def micro_batches(batch, n):
    x, y = batch
    return zip(x.chunk(n), y.chunk(n))


def train_step(model, batch, opt, accum_steps=1, max_norm=1.0):
    """Forward/backward over `accum_steps` micro-batches, then one update. Returns the mean loss."""
    opt.zero_grad(set_to_none=True)
    total = torch.zeros((), device=batch[0].device)
    for x, y in micro_batches(batch, accum_steps):
        loss = F.smooth_l1_loss(model(x), y) / accum_steps
        loss.backward()
        total += loss.detach()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    opt.step()  # expect: XLA201
    return total
