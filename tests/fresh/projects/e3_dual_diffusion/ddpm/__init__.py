"""Text-conditioned DDPM that trains on GPUs or TPUs from one code base."""
