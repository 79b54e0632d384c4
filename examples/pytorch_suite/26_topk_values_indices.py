import torch
import torch.nn as nn


class Model(nn.Module):
    """Several outputs of two dtypes: top-k values (float) and their indices (int64)."""

    def __init__(self, k: int):
        super().__init__()
        self.k = k

    def forward(self, x: torch.Tensor):
        values, indices = torch.topk(x, self.k, dim=1)
        return values, indices


batch_size = 16
dim = 512
k = 8


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [k]
