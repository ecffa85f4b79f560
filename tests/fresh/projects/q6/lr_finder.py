"""LR range test (Smith 2015): a short exponential sweep, then the weights are put back."""
import copy

import torch


def lr_range_test(model, optimizer, get_batch, num_iters=100, start_lr=1e-7, end_lr=1.0):
    init_model = copy.deepcopy(model.state_dict())
    init_opt = copy.deepcopy(optimizer.state_dict())
    gamma = (end_lr / start_lr) ** (1.0 / num_iters)
    lrs, losses = [], []
    model.train()
    for i in range(num_iters):  # expect: XLA302
        lr = start_lr * gamma ** i
        for group in optimizer.param_groups:
            group["lr"] = lr
        x, y, m = get_batch()
        _, loss = model(x, y, loss_mask=m)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        lrs.append(lr)
        losses.append(loss.detach())
    curve = torch.stack(losses).float().cpu()
    model.load_state_dict(init_model)
    optimizer.load_state_dict(init_opt)
    best = int(curve.argmin())
    return lrs[best] / 10.0
