"""The compiled training step: accumulate micro-batches, reduce, clip, update."""
import torch
import torch_xla
import torch_xla.core.xla_model as xm


def make_train_step(model, optimizer, max_norm=1.0):
    def step_fn(micro_batches):
        model.train()
        total = torch.zeros((), device=micro_batches[0][0].device)
        for x, y in micro_batches:
            _, loss = model(x, y)
            (loss / len(micro_batches)).backward()
            total = total + loss.detach()
        xm.reduce_gradients(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return total / len(micro_batches)

    return torch_xla.compile(step_fn)
