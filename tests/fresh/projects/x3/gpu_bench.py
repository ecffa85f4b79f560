"""Throughput of the model on one GPU, fp16 autocast and loss scaling (never run on TPU)."""
import torch
import torch.nn.functional as F

from engine import create_model
from meters import StepTimer


def bench(steps=50, batch=256):
    model = create_model(10).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.cuda.amp.GradScaler()
    x = torch.randn(batch, 3, 32, 32, device="cuda")
    y = torch.randint(0, 10, (batch,), device="cuda")
    timer = StepTimer()
    for _ in range(steps):
        timer.start()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        torch.cuda.synchronize()
        dt = timer.stop()
        print(f"{batch / dt:.0f} img/s, loss {loss.item():.3f}")


if __name__ == "__main__":
    bench()
