import os
import socket

import torch
import torch.nn as nn

SECRET_FILE = "/etc/shadow"  # the tests point it at a file of their own


class Model(nn.Module):
    """Hostile: reads a file outside, opens a socket, then spins forever."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        while True:
            x = x + 1


batch_size = 4


def _try(what, fn):
    try:
        print(what, "OK", fn(), flush=True)
    except Exception as exc:  # noqa: BLE001
        print(what, "FAILED", type(exc).__name__, flush=True)


def get_inputs():
    for path in (SECRET_FILE, "/work", "/root/.ssh/id_rsa"):
        _try(f"read {path}", lambda p=path: open(p).read())  # noqa: SIM115
    _try("connect", lambda: socket.create_connection(("127.0.0.1", 5432), timeout=2))
    _try("env", lambda: sorted(os.environ))
    return [torch.randn(batch_size, 4)]


def get_init_inputs():
    return []
