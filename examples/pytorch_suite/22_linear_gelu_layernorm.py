import torch
import torch.nn as nn


class Model(nn.Module):
    """Fused (level-2 style): Linear, GELU, LayerNorm."""

    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.norm = nn.LayerNorm(out_features)

    def forward(self, x: torch.Tensor):
        return self.norm(torch.nn.functional.gelu(self.linear(x)))


batch_size = 16
in_features = 128
out_features = 64


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
