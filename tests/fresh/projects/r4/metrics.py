import numpy as np


def log_step(xla_model, loss, step, lr):
    """Average the loss over replicas and print it on the first one."""
    value = loss.item()  # expect: XLA507
    mean = xla_model.mesh_reduce("train_loss", value, np.mean)
    if xla_model.get_ordinal() == 0:  # expect: XLA802
        print(f"step {step:6d} | loss {mean:.4f} | lr {lr:.2e}", flush=True)
