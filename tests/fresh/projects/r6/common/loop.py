import time

import torch
import torch.nn.functional as F


def train_one_epoch(model, loader, optimizer, scheduler, device, max_grad_norm=1.0):
    """One pass over `loader`; returns (mean loss, mean step time in seconds)."""
    model.train()
    running_loss, steps = 0.0, 0
    step_times = []
    for tokens, targets in loader:
        t0 = time.perf_counter()
        tokens = tokens.to(device, non_blocking=True)
        targets = targets.to(device, non_blocking=True)
        logits = model(tokens)
        loss = F.cross_entropy(logits.flatten(0, 1), targets.flatten())
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
        optimizer.step()
        step_times.append(time.perf_counter() - t0)  # expect: XLA504
        optimizer.zero_grad(set_to_none=True)
        scheduler.step()
        running_loss += loss.item()  # expect: XLA501
        steps += 1
    if torch.cuda.is_available():
        print(f"peak memory {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")
    torch.cuda.synchronize()  # expect: XLA401
    return running_loss / max(steps, 1), sum(step_times) / max(len(step_times), 1)
