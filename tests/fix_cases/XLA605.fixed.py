import torch.distributed.checkpoint as dist_cp
import torch_xla


def train(model, optimizer, loader, loss_fn):
    model.to(torch_xla.device())
    for step, (x, y) in enumerate(loader):
        loss_fn(model(x), y).backward()
        optimizer.step()
        if step % 1000 == 0:
            torch_xla.sync()
            dist_cp.save({"model": model.state_dict()}, checkpoint_id=f"ckpt/{step}")
        torch_xla.sync()
