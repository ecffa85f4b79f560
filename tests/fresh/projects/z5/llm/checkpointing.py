import torch.distributed as dist
import torch_xla.experimental.distributed_checkpoint as xc


def make_checkpoint_manager(cfg):
    if not dist.is_initialized():
        dist.init_process_group("xla", init_method="xla://")  # expect: XLA107
    return xc.CheckpointManager(cfg.ckpt_dir, save_interval=cfg.save_every)


def maybe_save(manager, step, model, optimizer):
    state = {"model": model.state_dict(), "optim": optimizer.state_dict()}
    return manager.save_async(step, state)
