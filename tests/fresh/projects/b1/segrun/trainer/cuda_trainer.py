import torch
import torch.nn.functional as F


class CUDATrainer:
    def __init__(self, flags, model, train_loader, val_loader):
        self.flags = flags
        self.model = model.cuda()
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=flags.lr)
        self.scaler = torch.cuda.amp.GradScaler()
        self.train_loader, self.val_loader = train_loader, val_loader

    def train_epoch(self, epoch):
        self.model.train()
        for step, (x, y) in enumerate(self.train_loader):
            x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
            self.optimizer.zero_grad(set_to_none=True)
            with torch.cuda.amp.autocast(dtype=torch.float16):
                loss = F.cross_entropy(self.model(x), y)
            self.scaler.scale(loss).backward()
            self.scaler.step(self.optimizer)
            self.scaler.update()
            if step % self.flags.log_every == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f}")
        torch.cuda.synchronize()

    def save(self, path):
        torch.save(self.model.state_dict(), path)
