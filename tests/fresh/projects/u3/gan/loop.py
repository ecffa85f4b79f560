"""One epoch of alternating discriminator / generator updates."""
import torch
import torch_xla.core.xla_model as xm

from . import losses


def d_step(netD, netG, real, opt_d, z_dim, r1_gamma):
    opt_d.zero_grad(set_to_none=True)
    z = torch.randn(real.size(0), z_dim, device=real.device)
    with torch.no_grad():
        fake = netG(z)
    real.requires_grad_(r1_gamma > 0)
    real_logits = netD(real)
    loss = losses.d_logistic(real_logits, netD(fake))
    if r1_gamma > 0:
        loss = loss + 0.5 * r1_gamma * losses.r1_penalty(real_logits, real)
    loss.backward()
    xm.optimizer_step(opt_d)
    return loss.detach()


def g_step(netD, netG, batch_size, opt_g, z_dim, device):
    opt_g.zero_grad(set_to_none=True)
    z = torch.randn(batch_size, z_dim, device=device)
    loss = losses.g_nonsaturating(netD(netG(z)))
    loss.backward()
    opt_g.step()  # expect: XLA201
    return loss.detach()


def train_epoch(netG, netD, opt_g, opt_d, loader, cfg, device, epoch):
    netG.train()
    netD.train()
    for step, (real, _) in enumerate(loader):
        loss_d = d_step(netD, netG, real, opt_d, cfg.z_dim, cfg.r1_gamma)
        loss_g = g_step(netD, netG, real.size(0), opt_g, cfg.z_dim, device)
        if step % cfg.log_every == 0:
            print(f"[{epoch}:{step}] loss_d={loss_d:.4f} loss_g={loss_g:.4f}", flush=True)  # expect: XLA507
