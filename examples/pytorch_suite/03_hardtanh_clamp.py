import torch
import torch.nn as nn


class Model(nn.Module):
    """Elementwise: clamp to [-1, 1] (HardTanh)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor):
        return torch.clamp(x, -1.0, 1.0)


batch_size = 32
dim = 512


def get_inputs():
    return [torch.randn(batch_size, dim) * 2]


def get_init_inputs():
    return []
