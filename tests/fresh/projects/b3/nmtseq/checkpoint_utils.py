import os

import torch


def save_checkpoint(args, trainer, epoch):
    if not trainer.is_data_parallel_master:
        return
    os.makedirs(args.save_dir, exist_ok=True)
    path = os.path.join(args.save_dir, f"checkpoint{epoch}.pt")
    state = {"args": vars(args), "model": trainer._model.state_dict(),
             "optimizer": trainer.optimizer.state_dict(), "epoch": epoch}
    if args.tpu:
        import torch_xla.core.xla_model as xm
        xm.save(state, path)  # expect: XLA602
    else:
        torch.save(state, path)
