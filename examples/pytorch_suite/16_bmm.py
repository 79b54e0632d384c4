import torch
import torch.nn as nn


class Model(nn.Module):
    """Batched GEMM: torch.bmm."""

    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor):
        return torch.bmm(a, b)


batch = 8
m = 32
k = 64
n = 48


def get_inputs():
    return [torch.randn(batch, m, k), torch.randn(batch, k, n)]


def get_init_inputs():
    return []
