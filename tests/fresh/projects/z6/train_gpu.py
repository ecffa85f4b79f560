"""The original single-GPU script: python train_gpu.py"""
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torchvision import datasets, transforms

from config import GANConfig
from models import Discriminator, Generator


def main():
    cfg = GANConfig()
    torch.manual_seed(cfg.seed)
    netG, netD = Generator(cfg.nz, cfg.ngf).cuda(), Discriminator(cfg.ndf).cuda()
    opt_g = torch.optim.Adam(netG.parameters(), lr=cfg.lr, betas=(0.5, 0.999))
    opt_d = torch.optim.Adam(netD.parameters(), lr=cfg.lr, betas=(0.5, 0.999))
    scaler = torch.cuda.amp.GradScaler()
    tf = transforms.Compose([transforms.Resize(cfg.image_size), transforms.CenterCrop(cfg.image_size), transforms.ToTensor()])
    loader = DataLoader(datasets.ImageFolder(cfg.data_root, tf), batch_size=cfg.batch_size, shuffle=True, num_workers=4)
    for epoch in range(cfg.epochs):
        for i, (real, _) in enumerate(loader):
            real = real.cuda(non_blocking=True)
            fake = netG(torch.randn(real.size(0), cfg.nz, 1, 1, device="cuda"))
            opt_d.zero_grad()
            with torch.cuda.amp.autocast():
                d_loss = F.softplus(-netD(real)).mean() + F.softplus(netD(fake.detach())).mean()
            scaler.scale(d_loss).backward()
            scaler.step(opt_d)
            opt_g.zero_grad()
            with torch.cuda.amp.autocast():
                g_loss = F.softplus(-netD(fake)).mean()
            scaler.scale(g_loss).backward()
            scaler.step(opt_g)
            scaler.update()
            if i % 100 == 0:
                print(f"[{epoch}][{i}] loss_D {d_loss.item():.3f} loss_G {g_loss.item():.3f}")
        torch.save(netG.state_dict(), f"netG_epoch{epoch}.pt")


if __name__ == "__main__":
    main()
