"""Linear beta schedule and the forward (noising) process."""
import torch


class NoiseSchedule:
    def __init__(self, timesteps, device, beta_start=1e-4, beta_end=2e-2):
        self.timesteps = timesteps
        betas = torch.linspace(beta_start, beta_end, timesteps, dtype=torch.float32)
        alphas_cumprod = torch.cumprod(1.0 - betas, dim=0)
        self.betas = betas.to(device)
        self.sqrt_ab = alphas_cumprod.sqrt().to(device)
        self.sqrt_1m_ab = (1.0 - alphas_cumprod).sqrt().to(device)

    def sample_timesteps(self, n, device="cuda"):
        return torch.randint(0, self.timesteps, (n,), device=device)

    def add_noise(self, x0, noise, t):
        a = self.sqrt_ab[t].view(-1, 1, 1, 1)
        b = self.sqrt_1m_ab[t].view(-1, 1, 1, 1)
        return a * x0 + b * noise
