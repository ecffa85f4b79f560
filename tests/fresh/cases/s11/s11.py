# Single-device training of a tiny tied-embedding LM with a masked loss, on one TPU chip.
import torch
import torch.nn as nn
import torch_xla


class TiedLM(nn.Module):
    def __init__(self, vocab=5000, dim=256):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.body = nn.Sequential(nn.Linear(dim, dim), nn.GELU(), nn.Linear(dim, dim))
        self.lm_head = nn.Linear(dim, vocab, bias=False)

    def forward(self, ids):
        return self.lm_head(self.body(self.embed(ids)))


def train(steps=2000, pad_id=0):
    device = torch_xla.device()
    model = TiedLM()
    model.lm_head.weight = model.embed.weight  # expect: XLA903
    model.to(device)
    value_head = nn.Linear(256, 1)  # expect: XLA404
    params = list(model.parameters()) + list(value_head.parameters())
    optimizer = torch.optim.AdamW(params, lr=3e-4)
    print("embedding storage at", model.embed.weight.data_ptr())  # expect: XLA904
    for step in range(steps):  # expect: XLA302
        ids = torch.randint(0, 5000, (32, 65)).to(device)
        inp, tgt = ids[:, :-1], ids[:, 1:]
        logits = model(inp)
        per_tok = nn.functional.cross_entropy(logits.flatten(0, 1), tgt.flatten(), reduction="none")
        keep = tgt.flatten() != pad_id
        loss = per_tok[keep].mean()  # expect: XLA503
        if torch.isnan(loss):  # expect: XLA502
            continue
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return model


if __name__ == "__main__":
    train()
