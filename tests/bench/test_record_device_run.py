"""scripts/record_device_run.sh: a device call's output recorded under docs/results/ as it came back (copied) or
computed from it by the committed scripts, with provenance, and never over an existing record."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "docs" / "results"
JUNIT = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" failures="1" skipped="1" tests="3">
<testcase classname="tests.bench.test_harness_gpu" name="test_a" time="1.0"/>
<testcase classname="tests.bench.test_harness_gpu" name="test_b" time="2.0"><failure message="boom">trace</failure></testcase>
<testcase classname="tests.bench.test_harness_gpu" name="test_c" time="0.0"><skipped message="no PostgreSQL"/></testcase>
</testsuite></testsuites>"""
ENV = "name, driver_version, clocks.sm [MHz], clocks.max.sm [MHz]\nNVIDIA H200, 580.159.04, 1980 MHz, 1980 MHz\nSat Dec  5 01:02:03 UTC 2026\n"


def _record(out: Path, results: Path, *args: str, label: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", str(REPO / "scripts" / "record_device_run.sh"), str(out), *args],
        cwd=REPO,
        env={"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "RESULTS_DIR": str(results), "PYTHON": sys.executable}
        | ({"LABEL": label} if label is not None else {}),
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_device_calls_output_is_recorded_with_provenance_and_never_over_an_earlier_record(tmp_path):
    out, results = tmp_path / "o1", tmp_path / "results"
    out.mkdir()
    results.mkdir()
    # a stand-in for what a device call returns: a committed suite run and figures, a small junit file
    shutil.copy(RESULTS / "suite_paper_run_e58467d.json", out / "suite.run.json")
    shutil.copy(RESULTS / "suite_paper_e58467d.json", out / "suite.json")
    shutil.copy(RESULTS / "throughput_figures_e58467d.json", out / "throughput_figures.json")
    (out / "gpu_tests.xml").write_text(JUNIT)
    (out / "env.txt").write_text(ENV)
    (out / "call.txt").write_text("command: COMMIT=abcdef1 DEADLINE_S=585 bash scripts/device_run.sh gpu-tests:240 suite:420\nsetup 3 s\n")

    done = _record(out, results, "abcdef1234567", str(RESULTS / "suite_paper_run_cfe4553.json"))
    assert done.returncode == 0, done.stderr
    written = {p.name for p in results.iterdir()}
    assert written == {
        "gpu_tests_abcdef1.json",
        "suite_paper_abcdef1.json",
        "suite_paper_run_abcdef1.json",
        "baseline_figures_paper_abcdef1.json",
        "baseline_figures_paper_abcdef1.md",
        "suite_baseline_ratio_abcdef1_vs_cfe4553.json",
        "throughput_figures_abcdef1.json",
    }
    for name, source in [
        ("suite_paper_run_abcdef1.json", "suite.run.json"),
        ("throughput_figures_abcdef1.json", "throughput_figures.json"),
    ]:
        assert (results / name).read_bytes() == (out / source).read_bytes()  # as the device returned it
    tests = json.loads((results / "gpu_tests_abcdef1.json").read_text())
    assert tests["provenance"] == {
        "commit": "abcdef1",
        "command": "COMMIT=abcdef1 DEADLINE_S=585 bash scripts/device_run.sh gpu-tests:240 suite:420",
        "gpu": "NVIDIA H200",
        "driver": "580.159.04",
        "date": "Sat Dec  5 01:02:03 UTC 2026",
    }
    # the same two runs as the committed comparison: the same figures
    ratio = json.loads((results / "suite_baseline_ratio_abcdef1_vs_cfe4553.json").read_text())
    committed = json.loads((RESULTS / "suite_baseline_ratio_e58467d_vs_cfe4553.json").read_text())
    assert ratio["ratio_new_over_old"] == committed["ratio_new_over_old"]

    before = {p.name: p.read_bytes() for p in results.iterdir()}
    again = _record(out, results, "abcdef1234567")
    assert again.returncode == 1 and "exists already: not overwritten" in again.stderr
    assert {p.name: p.read_bytes() for p in results.iterdir()} == before


def test_the_gpu_tests_record_needs_the_calls_command_and_its_environment(tmp_path):
    out, results = tmp_path / "o1", tmp_path / "results"
    out.mkdir()
    results.mkdir()
    (out / "gpu_tests.xml").write_text(JUNIT)
    (out / "env.txt").write_text(ENV)
    done = _record(out, results, "abcdef1")
    assert done.returncode == 1 and "command is unknown" in done.stderr
    (out / "env.txt").unlink()
    (out / "call.txt").write_text("command: bash scripts/device_run.sh gpu-tests:240\n")
    done = _record(out, results, "abcdef1")
    assert done.returncode == 1 and "env.txt is missing" in done.stderr
    assert not any(results.iterdir())
    done = _record(out, results, "../../x")  # a path where a commit belongs
    assert done.returncode == 2 and "not a commit hash" in done.stderr
    assert not any(results.iterdir())


def test_a_labelled_record_of_the_same_commit_sits_beside_the_first(tmp_path):
    """An A/B's second side (the same commit, other settings) is recorded under <sha>-<label>, beside the first."""
    out, results = tmp_path / "o1", tmp_path / "results"
    out.mkdir()
    results.mkdir()
    shutil.copy(RESULTS / "suite_paper_e58467d.json", out / "suite.json")
    assert _record(out, results, "abcdef1").returncode == 0
    done = _record(out, results, "abcdef1", label="blas0-pageable")
    assert done.returncode == 0, done.stderr
    assert {p.name for p in results.iterdir()} == {"suite_paper_abcdef1.json", "suite_paper_abcdef1-blas0-pageable.json"}
    bad = _record(out, results, "abcdef1", label="../x")
    assert bad.returncode == 2 and "lower-case letters" in bad.stderr
    assert len(list(results.iterdir())) == 2
