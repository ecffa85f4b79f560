# options: --unsafe-fixes
# remains: XLA203
import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl


def clip_then_xm_step(index, loader, model, opt, max_norm):
    device = torch_xla.device()
    for x in pl.MpDeviceLoader(loader, device):
        model(x).sum().backward()
        if max_norm:
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        xm.optimizer_step(opt)


def clip_then_plain_step(index, loader, model, optimizer):
    device = torch_xla.device()
    for x in pl.MpDeviceLoader(loader, device):
        model(x).sum().backward()
        # clip the gradients
        torch.nn.utils.clip_grad_value_(model.parameters(), 0.5)
        optimizer.step()


def step_under_a_branch(index, loader, model, opt):
    device = torch_xla.device()
    for step, x in enumerate(pl.MpDeviceLoader(loader, device)):
        model(x).sum().backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # accumulates: a human
        if step % 4 == 0:
            xm.optimizer_step(opt)


if __name__ == "__main__":
    torch_xla.launch(clip_then_xm_step, args=(None, None, None, 1.0))
    torch_xla.launch(clip_then_plain_step, args=(None, None, None))
    torch_xla.launch(step_under_a_branch, args=(None, None, None))
