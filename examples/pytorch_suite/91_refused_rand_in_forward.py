import torch
import torch.nn as nn


class Model(nn.Module):
    """REFUSED (random): noise drawn with torch.rand inside forward."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor):
        return x + 0.01 * torch.rand_like(x)


batch_size = 16
dim = 256


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
