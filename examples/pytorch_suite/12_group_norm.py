import torch
import torch.nn as nn


class Model(nn.Module):
    """Norm: GroupNorm with affine parameters."""

    def __init__(self, groups: int, channels: int):
        super().__init__()
        self.gn = nn.GroupNorm(groups, channels)

    def forward(self, x: torch.Tensor):
        return self.gn(x)


batch_size = 4
groups = 4
channels = 16
height = 8
width = 8


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [groups, channels]
