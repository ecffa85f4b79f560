import torch.nn as nn


class CharRNN(nn.Module):
    def __init__(self, vocab=256, dim=512, layers=2, dropout=0.2):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.rnn = nn.LSTM(dim, dim, num_layers=layers, batch_first=True, dropout=dropout)
        self.drop = nn.Dropout(dropout)
        self.head = nn.Linear(dim, vocab)

    def forward(self, x):
        if (x < 0).any():  # expect: XLA502
            raise ValueError("negative token id")
        h, _ = self.rnn(self.embed(x))
        return self.head(self.drop(h))
