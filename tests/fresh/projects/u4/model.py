"""A small Transformer LM (student and teacher) with a classification head, and the distillation loss."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class TinyLM(nn.Module):
    def __init__(self, vocab_size, dim, layers, num_labels=2, max_len=256):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim, padding_idx=0)
        self.pos = nn.Embedding(max_len, dim)
        layer = nn.TransformerEncoderLayer(dim, nhead=8, dim_feedforward=4 * dim, batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers)
        self.norm = nn.LayerNorm(dim)
        self.lm_head = nn.Linear(dim, vocab_size, bias=False)
        self.head = nn.Linear(dim, num_labels)

    def encode(self, input_ids, attention_mask=None):
        positions = torch.arange(input_ids.size(1), device=input_ids.device)
        h = self.embed(input_ids) + self.pos(positions)
        causal = nn.Transformer.generate_square_subsequent_mask(input_ids.size(1), device=input_ids.device)
        return self.norm(self.encoder(h, mask=causal, is_causal=True))

    def forward(self, input_ids, attention_mask=None):
        return self.lm_head(self.encode(input_ids, attention_mask))

    def classify(self, input_ids):
        return self.head(self.encode(input_ids)[:, -1])


def distill_loss(student_logits, teacher_probs, attention_mask, temperature=2.0):
    """Token-level KL(teacher || student), padding masked out by multiplication (static shapes)."""
    log_p = F.log_softmax(student_logits / temperature, dim=-1)
    kl = (teacher_probs * (torch.log(teacher_probs + 1e-9) - log_p)).sum(-1)
    mask = attention_mask.float()
    return (kl * mask).sum() / mask.sum().clamp(min=1.0) * temperature**2
