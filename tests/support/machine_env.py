"""The CUDAMASTER_* variables that describe this machine (where nvcc and bubblewrap are, the scratch root, the
commit): tests clear a developer's other CUDAMASTER_* settings but keep these (the H200 carries bubblewrap unpacked)."""

from __future__ import annotations

import os

import pytest

MACHINE = (
    "CUDAMASTER_HARNESS__NVCC",
    "CUDAMASTER_HARNESS__NVCC_ARCH",
    "CUDAMASTER_HARNESS__SANDBOX_BWRAP",
    "CUDAMASTER_HARNESS__SCRATCH_ROOT",
    "CUDAMASTER_GIT_COMMIT",
)


def clear_settings_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Remove every CUDAMASTER_* variable but the machine's own."""
    for key in [v for v in os.environ if v.startswith("CUDAMASTER_") and v not in MACHINE]:
        monkeypatch.delenv(key)
