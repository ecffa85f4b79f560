import torch
import torch.nn.functional as F
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl


class XLATrainer:
    def __init__(self, flags, model, train_loader, val_loader):
        self.flags = flags
        self.device = xm.xla_device()  # expect: XLA804
        self.model = model.to(self.device)
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=flags.lr)
        self.train_loader = pl.MpDeviceLoader(train_loader, self.device)
        self.val_loader = pl.MpDeviceLoader(val_loader, self.device)

    def train_epoch(self, epoch):
        self.model.train()
        for step, (x, y) in enumerate(self.train_loader):
            self.optimizer.zero_grad()
            loss = F.cross_entropy(self.model(x), y)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.flags.clip)  # expect: XLA203
            xm.optimizer_step(self.optimizer)
            if step % self.flags.log_every == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f}")  # expect: XLA507

    @torch.no_grad()
    def validate(self):
        self.model.eval()
        correct = torch.zeros((), device=self.device)
        total = 0
        for x, y in self.val_loader:
            correct += (self.model(x).argmax(1) == y).sum()
            total += y.numel()
        accuracy = xm.mesh_reduce("val_acc", correct.item() / total, lambda v: sum(v) / len(v))
        xm.master_print(f"val accuracy {accuracy:.4f}")
        return accuracy

    def save(self, path):
        torch.save(self.model.state_dict(), path)  # expect: XLA601
