import torch.nn as nn


class BagOfEmbeddingsClassifier(nn.Module):
    def __init__(self, vocab_size, num_labels, dim=256, dropout=0.1):
        super().__init__()
        self.embed = nn.EmbeddingBag(vocab_size, dim, mode="mean")
        self.dropout = nn.Dropout(dropout)
        self.classifier = nn.Linear(dim, num_labels)

    def forward(self, input_ids, offsets):
        return self.classifier(self.dropout(self.embed(input_ids, offsets)))
