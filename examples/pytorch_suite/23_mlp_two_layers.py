import torch
import torch.nn as nn


class Model(nn.Module):
    """Parameters: a two-layer MLP (Linear, ReLU, Linear) with its weights and biases."""

    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x: torch.Tensor):
        return self.fc2(torch.relu(self.fc1(x)))


batch_size = 8
dim = 64
hidden = 256


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [dim, hidden]
