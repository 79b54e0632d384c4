""".ci/run fails at once, naming the tool, when nvcc or PostgreSQL is missing (scripts/ci_check.py tools), and CI
fails when a test that is not a GPU test skips for a reason not listed (scripts/ci_check.py skips, on pytest's
JUnit XML; GPU tests carry a property tests/conftest.py puts on them)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _stubs(tmp_path: Path, *tools: str) -> Path:
    """A PATH folder with the commands .ci/run uses before its check (dirname, id, python3) and stand-ins for `tools`."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for real in ("dirname", "id"):
        (bin_dir / real).symlink_to(shutil.which(real))
    (bin_dir / "python3").symlink_to(sys.executable)
    for tool in tools:
        (bin_dir / tool).write_text("#!/bin/sh\nexit 0\n")
        (bin_dir / tool).chmod(0o755)
    return bin_dir


def _ci_run(tmp_path: Path, bin_dir: Path, postgres_port: int) -> subprocess.CompletedProcess:
    """.ci/run in a copy of the repository's CI files only: if its check let it through, it would stop at once
    (no pyproject.toml to install), never run the suite."""
    checkout = tmp_path / "checkout"
    (checkout / ".ci").mkdir(parents=True)
    (checkout / "scripts").mkdir()
    shutil.copy(REPO / ".ci" / "run", checkout / ".ci" / "run")
    shutil.copy(REPO / "scripts" / "ci_check.py", checkout / "scripts" / "ci_check.py")
    env = {
        "PATH": str(bin_dir),
        "HOME": str(tmp_path),
        "CUDAMASTER_TEST_POSTGRES": f"postgresql+psycopg://postgres@127.0.0.1:{postgres_port}/test",
    }
    out = subprocess.run(["/bin/bash", str(checkout / ".ci" / "run")], cwd=checkout, env=env, capture_output=True, text=True, timeout=60)
    assert not (checkout / ".venv").exists(), "the check let CI go on to install"
    return out


@pytest.fixture
def listening_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        yield s.getsockname()[1]


@pytest.fixture
def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed on return: nothing listens there


def test_ci_fails_at_once_naming_nvcc_when_it_is_missing_with_fake_tools(tmp_path, listening_port):
    out = _ci_run(tmp_path, _stubs(tmp_path, "bwrap", "chromium"), listening_port)
    assert out.returncode != 0
    assert "nvcc is missing" in out.stderr
    assert "PostgreSQL" not in out.stderr and "bubblewrap" not in out.stderr and "chromium" not in out.stderr


def test_ci_fails_at_once_naming_postgresql_when_its_port_is_closed_with_fake_tools(tmp_path, closed_port):
    out = _ci_run(tmp_path, _stubs(tmp_path, "bwrap", "chromium", "nvcc"), closed_port)
    assert out.returncode != 0
    assert f"PostgreSQL is not reachable at 127.0.0.1:{closed_port}" in out.stderr
    assert "nvcc" not in out.stderr


def test_tools_check_passes_with_every_tool_and_names_bubblewrap_and_chromium_with_fake_tools(tmp_path, listening_port):
    sys.path.insert(0, str(REPO / "scripts"))
    try:
        import ci_check
    finally:
        sys.path.pop(0)
    env = {
        "PATH": str(_stubs(tmp_path, "bwrap", "chromium", "nvcc")),
        "CUDAMASTER_TEST_POSTGRES": f"postgresql://p@127.0.0.1:{listening_port}/test",
    }
    assert ci_check.missing_tools(env) == []
    (tmp_path / "bin" / "bwrap").unlink()
    (tmp_path / "bin" / "chromium").unlink()
    missing = ci_check.missing_tools(env | {"CUDAMASTER_TEST_CHROMIUM": str(tmp_path / "no-chromium")})
    assert [m.split(" ")[0] for m in missing] == ["bubblewrap", "chromium"]


JUNIT = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" tests="4">
<testcase classname="tests.bench.test_vendor" name="test_device_machine_has_every_vendor_library[cublas]" time="0.0">
<properties><property name="marker" value="gpu"/></properties><skipped message="no GPU here (nvidia-smi not found)"/></testcase>
<testcase classname="tests.bench.test_sandbox" name="test_root_fallback" time="0.0">
<skipped message="the root fallback exists only for a service running as root"/></testcase>
<testcase classname="tests.bench.test_tasks" name="test_ok" time="0.1"/>
{extra}
</testsuite></testsuites>"""
HIDDEN = '<testcase classname="tests.service.test_api" name="test_x[postgresql]" time="0.0"><skipped message="PostgreSQL not reachable"/></testcase>'


def _skips(tmp_path: Path, extra: str) -> subprocess.CompletedProcess:
    xml = tmp_path / "ci.xml"
    xml.write_text(JUNIT.format(extra=extra))
    return subprocess.run(
        [sys.executable, str(REPO / "scripts" / "ci_check.py"), "skips", str(xml)], capture_output=True, text=True, timeout=60
    )


def test_skip_check_fails_on_a_non_gpu_skip_and_passes_gpu_and_listed_skips(tmp_path):
    ok = _skips(tmp_path, "")
    assert ok.returncode == 0, ok.stderr
    assert "1 gpu tests (run on the device), 1 allowed, 0 not allowed" in ok.stdout
    bad = _skips(tmp_path, HIDDEN)
    assert bad.returncode == 1
    assert "not allowed to skip: tests.service.test_api::test_x[postgresql]: PostgreSQL not reachable" in bad.stderr


def test_gpu_tests_carry_the_property_the_skip_check_reads(tmp_path):
    """tests/conftest.py marks every `gpu` test in the JUnit XML, on any machine (skipped here, run on the device)."""
    xml = tmp_path / "run.xml"
    # a pytest of its own, not an xdist worker's (PYTEST_XDIST_* in this process's environment would make it act as one)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_XDIST_", "PYTEST_CURRENT_TEST"))} | {"PYTHONPATH": str(REPO)}
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-n",
            "0",
            "-q",
            "-p",
            "no:cacheprovider",
            f"--junitxml={xml}",
            "tests/bench/test_vendor.py",
            "-k",
            "device_machine_has or inlining",
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert xml.is_file(), run.stdout + run.stderr
    cases = {c.get("name"): {p.get("name"): p.get("value") for p in c.iter("property")} for c in ET.parse(xml).getroot().iter("testcase")}
    gpu = [name for name in cases if name.startswith("test_device_machine_has_every_vendor_library")]
    assert len(gpu) == 4 and all(cases[name].get("marker") == "gpu" for name in gpu)
    assert cases["test_inlining_includes_each_header_once"] == {}
