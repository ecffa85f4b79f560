"""Loss and update helpers for the two networks."""
import torch
import torch.nn.functional as F


def discriminator_loss(disc, gen, real, z, labels):
    with torch.no_grad():
        fake = gen(z)
    real_logits = disc(real)
    fake_logits = disc(fake)
    # real images flagged by the curation pass (label 0) get half weight
    real_term = torch.where(labels == 1, F.relu(1.0 - real_logits), 0.5 * F.relu(1.0 - real_logits))
    # only the fakes that currently fool D contribute
    fooled = fake_logits[fake_logits > 0]  # expect: XLA503
    return real_term.mean() + F.relu(1.0 + fooled).sum() / fake_logits.numel()


def generator_step(gen, disc, z, opt_g):
    opt_g.zero_grad()
    g_loss = -disc(gen(z)).mean()
    g_loss.backward()
    opt_g.step()  # expect: XLA201
    return g_loss.detach()
