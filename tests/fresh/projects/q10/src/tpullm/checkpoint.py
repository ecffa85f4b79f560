import torch.distributed as dist
import torch.distributed.checkpoint as dist_cp
import torch_xla.experimental.distributed_checkpoint as xc


def init_checkpoint_group():
    if not dist.is_initialized():
        dist.init_process_group("gloo", init_method="xla://")


def save_checkpoint(model, optimizer, step, ckpt_dir):
    state = {"model": model.state_dict(), "optim": optimizer.state_dict(), "step": step}
    dist_cp.save(  # expect: XLA605
        state_dict=state,
        storage_writer=dist_cp.FileSystemWriter(f"{ckpt_dir}/step_{step}"),
        planner=xc.SPMDSavePlanner(),
    )
