"""Single-program training on a TPU slice: python scripts/train_spmd.py"""
import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.spmd as xs

from tpullm import (
    Decoder,
    TrainConfig,
    build_mesh,
    build_train_loader,
    enable_spmd,
    init_checkpoint_group,
    log_step,
    save_checkpoint,
    shard_params,
)


def main():
    cfg = TrainConfig()
    device = torch_xla.device()
    enable_spmd()
    torch.manual_seed(cfg.seed)
    mesh = build_mesh()
    init_checkpoint_group()

    model = Decoder(cfg.model, mesh=mesh).to(device)
    shard_params(model, mesh)
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=0.1)
    loader = build_train_loader(cfg)

    step = 0
    model.train()
    while step < cfg.steps:
        for batch in loader:
            input_ids = batch["input_ids"].to(device)
            labels = batch["labels"].to(device)
            xs.mark_sharding(input_ids, mesh, ("fsdp", None))  # expect: XLA907
            xs.mark_sharding(labels, mesh, ("fsdp", None))  # expect: XLA907
            loss = model(input_ids, labels)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            step += 1
            if step % cfg.save_every == 0:
                save_checkpoint(model, optimizer, step, cfg.ckpt_dir)
            if step % cfg.log_every == 0:
                xm.add_step_closure(log_step, args=(step, loss.detach()))
            torch_xla.sync()
            if step >= cfg.steps:
                break
    save_checkpoint(model, optimizer, step, cfg.ckpt_dir)


if __name__ == "__main__":
    main()
