"""Base trainer (shape of pytorch/xla examples/train_resnet_base.py)."""
import argparse
import time

import torch
import torch.nn as nn
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.runtime as xr
import torch_xla.utils.utils as xu
import torchvision

WORLD_SIZE = xr.world_size()  # expect: XLA003


def parse_flags():
    p = argparse.ArgumentParser()
    p.add_argument("--batch_size", type=int, default=128)
    p.add_argument("--num_steps", type=int, default=300)
    p.add_argument("--num_epochs", type=int, default=1)
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--max_norm", type=float, default=1.0)
    p.add_argument("--ckpt_dir", default="/tmp/resnet")
    return p.parse_args()


class TrainResNetBase:
    def __init__(self, flags):
        self.flags = flags
        self.img_dim = 224
        self.batch_size = flags.batch_size
        self.num_steps = flags.num_steps
        self.num_epochs = flags.num_epochs
        self.max_norm = flags.max_norm
        self.device = torch_xla.device()
        train_loader = xu.SampleGenerator(
            data=(
                torch.zeros(self.batch_size, 3, self.img_dim, self.img_dim),
                torch.zeros(self.batch_size, dtype=torch.int64),
            ),
            sample_count=self.num_steps // WORLD_SIZE,
        )
        self.train_device_loader = pl.MpDeviceLoader(train_loader, self.device)
        self.model = torchvision.models.resnet50().to(self.device)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=flags.lr, momentum=0.9)
        self.loss_fn = nn.CrossEntropyLoss()

    def _train_update(self, step, loss, tracker, epoch):
        print(f"epoch {epoch} step {step} loss {loss.item():.5f} rate {tracker.rate():.2f}")

    def clip_gradients(self):
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.max_norm)  # expect: XLA203

    def run_optimizer(self):
        xm.optimizer_step(self.optimizer)  # expect: XLA202

    def train_loop_fn(self, loader, epoch):
        tracker = xm.RateTracker()
        self.model.train()
        for step, (data, target) in enumerate(loader):
            self.optimizer.zero_grad()
            output = self.model(data)
            loss = self.loss_fn(output, target)
            loss.backward()
            self.clip_gradients()
            self.run_optimizer()
            tracker.add(self.batch_size)
            if step % 10 == 0:
                xm.add_step_closure(self._train_update, args=(step, loss, tracker, epoch))

    def save_checkpoint(self, path):
        xm.save(self.model.state_dict(), path)  # expect: XLA603

    def start_training(self):
        start = time.time()
        for epoch in range(1, self.num_epochs + 1):
            xm.master_print(f"Epoch {epoch} train begin {time.strftime('%l:%M%p %Z on %b %d, %Y')}")
            self.train_loop_fn(self.train_device_loader, epoch)
            xm.master_print(f"Epoch {epoch} train end {time.strftime('%l:%M%p %Z on %b %d, %Y')}")
            self.save_checkpoint(f"{self.flags.ckpt_dir}/epoch{epoch}.pt")
        xm.wait_device_ops()
        elapsed = time.time() - start
        xm.master_print(f"training took {elapsed:.1f}s")
