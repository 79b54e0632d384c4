import torch
import torch.nn as nn


class Model(nn.Module):
    """Pooling: 2x2 average pooling."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor):
        return torch.nn.functional.avg_pool2d(x, 2)


batch_size = 4
channels = 8
height = 32
width = 32


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return []
