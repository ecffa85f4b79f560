"""Ancestral sampling for the preview grid written after every epoch."""
import torch
import torchvision


@torch.no_grad()
def save_preview(unet, schedule, text_encoder, tokens, path, size=64):
    unet.eval()
    cond = text_encoder(input_ids=tokens).last_hidden_state
    x = torch.randn(tokens.size(0), 3, size, size).cuda()  # expect: XLA401
    for i in reversed(range(schedule.timesteps)):
        t = torch.full((x.size(0),), i, dtype=torch.long, device=x.device)
        eps = unet(x, t, cond.to(x.dtype))
        beta = schedule.betas[i]
        x = (x - beta / schedule.sqrt_1m_ab[i] * eps) / torch.sqrt(1.0 - beta)
        if i > 0:
            x = x + beta.sqrt() * torch.randn_like(x)
    grid = torchvision.utils.make_grid((x.clamp(-1, 1) + 1) / 2, nrow=2)
    torchvision.utils.save_image(grid.cpu(), path)
    unet.train()
