"""Per-step callbacks. The Trainer calls each one as `callback(trainer, module)` after backward;
bind options with functools.partial."""
import torch


def grad_norm_callback(trainer, module, norm_type=2.0):
    norms = [p.grad.detach().norm(norm_type) for p in module.parameters() if p.grad is not None]
    if not norms:
        return
    total = torch.stack(norms).norm(norm_type)
    trainer.history.setdefault("grad_norm", []).append(total.item())  # expect: XLA501


def lr_callback(trainer, module, group=0):
    trainer.history.setdefault("lr", []).append(trainer.optimizer.param_groups[group]["lr"])
