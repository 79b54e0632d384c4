import torch
import torch.nn as nn


class Model(nn.Module):
    """Refused: dropout in training mode makes the output random."""

    def __init__(self, p: float):
        super().__init__()
        self.linear = nn.Linear(64, 64)
        self.dropout = nn.Dropout(p)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.dropout(self.linear(x))


batch_size = 16


def get_inputs():
    return [torch.randn(batch_size, 64)]


def get_init_inputs():
    return [0.5]
