"""GAN objectives: the logistic (non-saturating) loss and the R1 gradient penalty on reals."""
import torch
import torch.nn.functional as F


def d_logistic(real_logits, fake_logits):
    assert real_logits.shape == fake_logits.shape
    loss = F.softplus(fake_logits).mean() + F.softplus(-real_logits).mean()
    assert torch.isfinite(loss), "discriminator loss diverged"  # expect: XLA502
    return loss


def g_nonsaturating(fake_logits):
    return F.softplus(-fake_logits).mean()


def r1_penalty(real_logits, real_images):
    (grad,) = torch.autograd.grad(real_logits.sum(), real_images, create_graph=True)
    return grad.pow(2).flatten(1).sum(1).mean()
