import torch
import torch.nn as nn


class Model(nn.Module):
    """GEMV: y = A @ x."""

    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, x: torch.Tensor):
        return a @ x


m = 256
k = 512


def get_inputs():
    return [torch.randn(m, k), torch.randn(k)]


def get_init_inputs():
    return []
