import torch
import torch.nn as nn


class Model(nn.Module):
    """Norm: BatchNorm2d in eval mode (running statistics as buffers)."""

    def __init__(self, channels: int):
        super().__init__()
        self.bn = nn.BatchNorm2d(channels)
        self.bn.eval()

    def forward(self, x: torch.Tensor):
        return self.bn(x)


batch_size = 4
channels = 8
height = 16
width = 16


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels]
