"""SPMD pre-training on a TPU pod slice (run the same command on every host)."""
import torch
import torch.nn.functional as F
import torch_xla
import torch_xla.distributed.parallel_loader as pl
import torch_xla.runtime as xr

from ckpt import save_sharded
from mesh_utils import batch_sharding, make_mesh, shard_params
from model import TiedLM
from perf import Tracker, epoch_timer, step_timer
from stream import token_batches

DATA = "/mnt/disks/tokens/train-*.npy"
CKPT_DIR = "gs://my-bucket/tiedlm"
GLOBAL_BATCH = 256
SEQ_LEN = 1024
EPOCHS = 2


def main():
    xr.use_spmd()
    torch_xla.manual_seed(0)
    device = torch_xla.device()
    mesh = make_mesh(model_axis=4)

    model = TiedLM(vocab=32000, dim=1024, layers=12).to(device)
    shard_params(model, mesh)
    compiled = torch.compile(model)  # expect: XLA403
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1)
    tracker = Tracker()

    step = 0
    for epoch in range(EPOCHS):
        loader = pl.MpDeviceLoader(token_batches(DATA, GLOBAL_BATCH, SEQ_LEN), device, input_sharding=batch_sharding(mesh))
        with epoch_timer(f"epoch {epoch}"):
            for inputs, targets in loader:
                with step_timer(tracker):
                    logits = compiled(inputs)
                    loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.reshape(-1))
                    loss.backward()
                    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                    optimizer.step()
                    optimizer.zero_grad(set_to_none=True)
                tracker.record(step, loss)
                step += 1
        print(f"epoch {epoch}: {tracker.summary()}")
        save_sharded(model, optimizer, CKPT_DIR, step)


if __name__ == "__main__":
    main()
