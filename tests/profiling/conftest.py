"""Profiling test fixtures."""

from __future__ import annotations

import pytest


@pytest.fixture
def unsandboxed(monkeypatch):
    """The fake ncu scripts read the repository's fixtures and write next to themselves, which the sandbox
    forbids (test_ncu_and_its_target_run_inside_the_sandbox covers ncu in the sandbox): these tests of the
    profiling plumbing use the opt-out."""
    from settings import reset_settings

    monkeypatch.setenv("CUDAMASTER_HARNESS__SANDBOX", "none")
    monkeypatch.setenv("CUDAMASTER_HARNESS__ALLOW_UNSANDBOXED", "true")
    reset_settings()
    yield
    reset_settings()
