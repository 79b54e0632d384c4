"""scripts/device_gpu_suite.sh and its record, on the CPU machine as far as it goes: the shards cover every collected
GPU test exactly once, and scripts/record_device_run.sh turns their JUnit files into one record that names every
test id and lists those no shard ran. (On the CPU machine the GPU tests skip; on the device they run.)"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
ENV = "name, driver_version, clocks.sm [MHz], clocks.max.sm [MHz]\nNVIDIA H100 80GB HBM3, 580.159.04, 1980 MHz, 1980 MHz\nMon Dec  7 01:02:03 UTC 2026\n"
SMALL = "tests/bench/test_vendor.py"  # 30 GPU tests: the suite's flow without collecting all of tests/


def _suite(out: Path, *shards: str) -> subprocess.CompletedProcess:
    # its pytest runs are pytests of their own, not an xdist worker's (PYTEST_XDIST_* here would make them act as one)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_XDIST_", "PYTEST_CURRENT_TEST"))} | {
        "OUT": str(out),
        "GPU_SUITE_TESTS": SMALL,
        "PYTHON": sys.executable,
        "PYTHONPATH": str(REPO),
        "DEADLINE_S": "300",
    }
    return subprocess.run(["bash", "scripts/device_gpu_suite.sh", *shards], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)


def _record(out: Path, results: Path, label: str) -> dict:
    run = subprocess.run(
        ["bash", "scripts/record_device_run.sh", str(out), "abcdef1234"],
        cwd=REPO,
        env=os.environ
        | {
            "RESULTS_DIR": str(results),
            "PYTHON": sys.executable,
            "LABEL": label,
            "COMMAND": "device_gpu_suite.sh collect timed:1/2 timed:2/2",
        },
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    return json.loads((results / f"gpu_suite_abcdef1-{label}.json").read_text())


@pytest.mark.slow
def test_shards_cover_every_gpu_test_once_and_the_record_names_each_and_what_did_not_run(tmp_path):
    out, results = tmp_path / "out", tmp_path / "results"
    results.mkdir()
    run = _suite(out, "collect", "timed:1/2", "timed:2/2")
    assert run.returncode == 0, run.stdout + run.stderr
    (out / "env.txt").write_text(ENV)  # the CPU machine has no nvidia-smi
    collected = [line for line in (out / "gpu_collected.txt").read_text().splitlines() if "::" in line]
    assert len(collected) == 30 and all(line.startswith(SMALL + "::") for line in collected)

    whole = _record(out, results, "whole")
    ids = [t["test"] for t in whole["tests"]]
    assert sorted(ids) == sorted(collected) and whole["not_run"] == []  # each once, by its node id
    assert whole["provenance"]["gpu"] == "NVIDIA H100 80GB HBM3" and whole["provenance"]["commit"] == "abcdef1"

    second = {t["test"] for t in whole["tests"]} - {
        t["test"] for t in _record_without(out, results, "gpu_timed-2-of-2.xml", "half")["tests"]
    }
    half = json.loads((results / "gpu_suite_abcdef1-half.json").read_text())
    assert sorted(half["not_run"]) == sorted(second) and half["counts"]["not_run"] == len(second) == 15


def _record_without(out: Path, results: Path, name: str, label: str) -> dict:
    partial = out.with_name("partial")
    shutil.copytree(out, partial)
    (partial / name).unlink()
    return _record(partial, results, label)


def test_record_refuses_shards_without_the_checklist(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "env.txt").write_text(ENV)
    (out / "gpu_timed-1-of-1.xml").write_text('<testsuites><testsuite name="pytest"/></testsuites>')
    run = subprocess.run(
        ["bash", "scripts/record_device_run.sh", str(out), "abcdef1"],
        cwd=REPO,
        env=os.environ | {"RESULTS_DIR": str(tmp_path), "PYTHON": sys.executable, "COMMAND": "x"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 1 and "gpu_collected.txt is missing" in run.stderr
