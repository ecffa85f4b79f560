"""The CIFAR-10 model as a minilit module."""
import torch
import torch.nn.functional as F
from torch import nn

from minilit import LightningModule


def conv_bn(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class ImageClassifier(LightningModule):
    def __init__(self, num_classes=10, lr=0.1, max_grad_norm=1.0):
        super().__init__()
        self.net = nn.Sequential(
            conv_bn(3, 64), conv_bn(64, 128), nn.MaxPool2d(2),
            conv_bn(128, 256), nn.MaxPool2d(2),
            conv_bn(256, 512), nn.AdaptiveMaxPool2d(1), nn.Flatten(),
            nn.Dropout(0.25), nn.Linear(512, num_classes),
        )
        self.lr = lr
        self.max_grad_norm = max_grad_norm
        self.loss_ema = 0.0

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        loss = F.cross_entropy(logits, y, label_smoothing=0.1)
        if torch.isnan(loss):  # expect: XLA502
            return None
        self.log("train_loss", loss)
        self.log("train_acc", (logits.argmax(dim=1) == y).float().mean())
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        return F.cross_entropy(self(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=self.lr, momentum=0.9, nesterov=True, weight_decay=5e-4)

    def on_before_optimizer_step(self, optimizer):
        torch.nn.utils.clip_grad_norm_(self.parameters(), self.max_grad_norm)

    def on_train_batch_end(self, outputs, batch, batch_idx):
        self.loss_ema = 0.98 * self.loss_ema + 0.02 * outputs["loss"].item()  # expect: XLA501

    def on_train_epoch_end(self):
        print(f"epoch {self.trainer.current_epoch}: train loss (ema) {self.loss_ema:.4f}")
