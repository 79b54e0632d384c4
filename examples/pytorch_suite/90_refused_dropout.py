import torch
import torch.nn as nn


class Model(nn.Module):
    """REFUSED (random): dropout in training mode makes the outputs random."""

    def __init__(self, p: float):
        super().__init__()
        self.drop = nn.Dropout(p)

    def forward(self, x: torch.Tensor):
        return self.drop(x)


batch_size = 16
dim = 256
p = 0.1


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [p]
