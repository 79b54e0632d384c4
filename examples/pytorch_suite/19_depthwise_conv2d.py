import torch
import torch.nn as nn


class Model(nn.Module):
    """Convolution: depthwise Conv2d (groups = channels), padding 1."""

    def __init__(self, channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, kernel_size, padding=1, groups=channels, bias=False)

    def forward(self, x: torch.Tensor):
        return self.conv(x)


batch_size = 2
channels = 16
kernel_size = 3
height = 16
width = 16


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels, kernel_size]
