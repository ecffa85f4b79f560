import torch
import torch.nn.functional as F
from tqdm import tqdm

from common.utils import Timer


def train_one_epoch(model, loader, optimizer, device, epoch, grad_clip=1.0, show=True):
    """One pass over `loader`; shared by the torchrun (CUDA) and TPU entry points."""
    model.train()
    pbar = tqdm(loader, desc=f"epoch {epoch}", disable=not show)
    steps = 0
    with Timer() as timer:
        for inputs, targets in pbar:
            inputs, targets = inputs.to(device), targets.to(device)
            optimizer.zero_grad(set_to_none=True)
            logits = model(inputs)
            loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))
            loss.backward()
            if grad_clip:
                torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
            optimizer.step()
            pbar.set_postfix(loss=loss.item())  # expect: XLA501
            steps += 1
    print(f"epoch {epoch}: {steps} steps in {timer.elapsed:.1f}s")
    return steps
