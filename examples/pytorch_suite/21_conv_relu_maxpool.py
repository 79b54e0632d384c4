import torch
import torch.nn as nn


class Model(nn.Module):
    """Fused (level-2 style): Conv2d, ReLU, MaxPool2d."""

    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3)
        self.pool = nn.MaxPool2d(2)

    def forward(self, x: torch.Tensor):
        return self.pool(torch.relu(self.conv(x)))


batch_size = 2
in_channels = 3
out_channels = 8
height = 18
width = 18


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
