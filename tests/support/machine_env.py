"""The CUDAMASTER_* variables that describe this machine (where nvcc, bubblewrap, ncu and the vendor libraries are,
the scratch root, the commit) and those that steer the tests themselves (CUDAMASTER_TEST_*): tests clear a
developer's other CUDAMASTER_* settings but keep these (the H200 carries bubblewrap unpacked).

tests/conftest.py removes a developer's settings from the test process's environment when it is imported (before
xdist starts its workers, before any server or CLI process is started): test servers and CLI runs see only what a
test sets. `clean_env` builds a child's environment the same way (a variable set later in the test process, by
monkeypatch, does not reach a server unless the test passes it)."""

from __future__ import annotations

import os
from collections.abc import Mapping, MutableMapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the fork server imports this module: no pytest there
    import pytest

MACHINE = (
    "CUDAMASTER_HARNESS__NVCC",
    "CUDAMASTER_HARNESS__NVCC_ARCH",
    "CUDAMASTER_HARNESS__GPU",  # which of the machine's GPUs the evaluations use
    "CUDAMASTER_HARNESS__SANDBOX_RO_PATHS",  # a toolkit or driver outside /usr, bound into the sandbox
    "CUDAMASTER_HARNESS__SANDBOX_BWRAP",
    "CUDAMASTER_HARNESS__SCRATCH_ROOT",
    "CUDAMASTER_HARNESS__VENDOR_PATHS",
    "CUDAMASTER_PROFILING__NCU",
    "CUDAMASTER_GIT_COMMIT",
)
TEST_PREFIX = "CUDAMASTER_TEST_"  # the tests' own switches (PostgreSQL's URL, the fork server, Ray's GPUs)


def is_developer_setting(name: str) -> bool:
    """A CUDAMASTER_* setting that is neither the machine's own nor one of the tests' switches."""
    return name.startswith("CUDAMASTER_") and name not in MACHINE and not name.startswith(TEST_PREFIX)


def clean_env(environ: Mapping[str, str] | None = None, **extra: str) -> dict[str, str]:
    """`environ` (os.environ by default) without a developer's settings, plus what the test sets."""
    base = os.environ if environ is None else environ
    return {k: v for k, v in base.items() if not is_developer_setting(k)} | extra


def remove_developer_settings(environ: MutableMapping[str, str]) -> list[str]:
    """Remove a developer's CUDAMASTER_* settings from `environ` in place; returns the names removed."""
    removed = sorted(k for k in environ if is_developer_setting(k))
    for key in removed:
        del environ[key]
    return removed


def clear_settings_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Remove every CUDAMASTER_* variable but the machine's own and the tests' switches."""
    for key in [v for v in os.environ if is_developer_setting(v)]:
        monkeypatch.delenv(key)
