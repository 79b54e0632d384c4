import torch
import torch.nn as nn


class Model(nn.Module):
    """Softmax family: softmax(x / T) with a temperature T from the constructor."""

    def __init__(self, temperature: float):
        super().__init__()
        self.temperature = temperature

    def forward(self, x: torch.Tensor):
        return torch.softmax(x / self.temperature, dim=1)


batch_size = 32
dim = 2048
temperature = 0.7


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [temperature]
