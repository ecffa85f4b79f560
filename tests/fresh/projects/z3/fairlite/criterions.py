import torch.nn as nn
import torch.nn.functional as F


class LabelSmoothedCrossEntropy(nn.Module):
    def __init__(self, eps, padding_idx):
        super().__init__()
        self.eps = eps
        self.padding_idx = padding_idx

    def forward(self, model, sample):
        logits = model(sample["net_input"]["src_tokens"], sample["net_input"]["prev_output_tokens"])
        lprobs = F.log_softmax(logits, dim=-1).view(-1, logits.size(-1))
        target = sample["target"].view(-1)
        non_pad = target.ne(self.padding_idx)
        lprobs, target = lprobs[non_pad], target[non_pad]  # expect: XLA503
        nll_loss = -lprobs.gather(1, target.unsqueeze(1)).squeeze(1)
        smooth_loss = -lprobs.mean(dim=-1)
        loss = ((1.0 - self.eps) * nll_loss + self.eps * smooth_loss).sum()
        return loss, sample["ntokens"], {"nll_loss": nll_loss.sum().detach(), "ntokens": sample["ntokens"]}
