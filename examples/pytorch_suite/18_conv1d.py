import torch
import torch.nn as nn


class Model(nn.Module):
    """Convolution: Conv1d with bias."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size)

    def forward(self, x: torch.Tensor):
        return self.conv(x)


batch_size = 4
in_channels = 8
out_channels = 16
kernel_size = 5
length = 128


def get_inputs():
    return [torch.randn(batch_size, in_channels, length)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
