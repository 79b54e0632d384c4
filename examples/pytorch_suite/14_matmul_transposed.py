import torch
import torch.nn as nn


class Model(nn.Module):
    """GEMM with a transposed operand: C = A @ B.T."""

    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor):
        return a @ b.t()


m = 64
k = 96
n = 80


def get_inputs():
    return [torch.randn(m, k), torch.randn(n, k)]


def get_init_inputs():
    return []
