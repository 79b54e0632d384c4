import torch
import torch.nn as nn


class Model(nn.Module):
    """An int64 input: an embedding lookup (gather rows of a parameter table)."""

    def __init__(self, vocab: int, dim: int):
        super().__init__()
        self.table = nn.Embedding(vocab, dim)

    def forward(self, ids: torch.Tensor):
        return self.table(ids)


vocab = 1000
dim = 64
batch_size = 8
seq = 32


def get_inputs():
    return [torch.randint(0, vocab, (batch_size, seq))]


def get_init_inputs():
    return [vocab, dim]
