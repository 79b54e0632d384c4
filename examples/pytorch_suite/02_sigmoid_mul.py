import torch
import torch.nn as nn


class Model(nn.Module):
    """Elementwise of two inputs: x * sigmoid(y) (a gated unit)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, y: torch.Tensor):
        return x * torch.sigmoid(y)


batch_size = 16
dim = 2048


def get_inputs():
    return [torch.randn(batch_size, dim), torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
