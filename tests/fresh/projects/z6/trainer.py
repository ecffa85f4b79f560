import torch
import torch.nn.functional as F
import torch_xla
import torch_xla.distributed.parallel_loader as pl

from dist_utils import wrap_ddp


class GANTrainer:
    def __init__(self, cfg, netG, netD, hooks=()):
        self.cfg = cfg
        self.device = torch_xla.device()
        self.netG = wrap_ddp(netG.to(self.device))
        self.netD = wrap_ddp(netD.to(self.device))
        self.opt_g = torch.optim.Adam(self.netG.parameters(), lr=cfg.lr, betas=(0.5, 0.999))
        self.opt_d = torch.optim.Adam(self.netD.parameters(), lr=cfg.lr, betas=(0.5, 0.999))
        self.hooks = list(hooks)

    def _autocast(self):
        return torch.autocast("cuda", dtype=torch.bfloat16)  # expect: XLA701

    def train_step(self, real):
        b = real.size(0)
        fake = self.netG(torch.randn(b, self.cfg.nz, 1, 1, device=self.device))

        self.opt_d.zero_grad()
        with self._autocast():
            logits = self.netD(torch.cat([real, fake.detach()]))
            d_loss = F.softplus(-logits[:b]).mean() + F.softplus(logits[b:]).mean()
        d_loss.backward()
        self.opt_d.step()

        self.opt_g.zero_grad()
        with self._autocast():
            g_loss = F.softplus(-self.netD(fake)).mean()
        g_loss.backward()
        self.opt_g.step()
        return d_loss.detach(), g_loss.detach()

    def fit(self, loader):
        for epoch in range(self.cfg.epochs):
            device_loader = pl.MpDeviceLoader(loader, self.device)
            for step, (real, _) in enumerate(device_loader):
                d_loss, g_loss = self.train_step(real)
                for hook in self.hooks:
                    hook.after_step(self, step, d_loss, g_loss)
            for hook in self.hooks:
                hook.after_epoch(self, epoch)
