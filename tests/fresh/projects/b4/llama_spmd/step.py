import torch
import torch.nn.functional as F

from llama_spmd.sharding import shard_batch


def train_step(model, optimizer, batch, mesh, device):
    ids, labels = (shard_batch(t.to(device), mesh) for t in batch)
    with torch.autocast("xla", dtype=torch.float16):  # expect: XLA703
        logits = model(ids, attention_mask=(ids != 0).long())
    loss = F.cross_entropy(logits.float().flatten(0, 1), labels.flatten())
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return loss
