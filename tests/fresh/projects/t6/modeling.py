import torch
import torch.nn.functional as F
from torch import nn


class SmallLM(nn.Module):
    def __init__(self, vocab_size, dim=384, n_layers=6, n_heads=6, max_len=512, dropout=0.1):
        super().__init__()
        self.tok_emb = nn.Embedding(vocab_size, dim)
        self.pos_emb = nn.Embedding(max_len, dim)
        self.drop = nn.Dropout(0.1)
        self.layers = nn.ModuleList(
            nn.TransformerEncoderLayer(dim, n_heads, 4 * dim, dropout=dropout, batch_first=True, norm_first=True)
            for _ in range(n_layers)
        )
        self.norm = nn.LayerNorm(dim)
        self.lm_head = nn.Linear(dim, vocab_size, bias=False)
        self.lm_head.weight = self.tok_emb.weight  # expect: XLA903

    def forward(self, input_ids, labels=None):
        t = input_ids.size(1)
        pos = torch.arange(t, device=input_ids.device)
        h = self.drop(self.tok_emb(input_ids) + self.pos_emb(pos))
        causal = nn.Transformer.generate_square_subsequent_mask(t, device=input_ids.device)
        for layer in self.layers:
            h = layer(h, src_mask=causal, is_causal=True)
        logits = self.lm_head(self.norm(h))
        if labels is None:
            return {"logits": logits}
        loss = F.cross_entropy(logits.flatten(0, 1), labels.flatten(), ignore_index=-100)
        keep = labels.ne(-100)
        acc = (logits.argmax(-1)[keep] == labels[keep]).float().mean()  # expect: XLA503
        return {"logits": logits, "loss": loss, "acc": acc}
