"""scripts/copy_bandwidth.py: the host<->device copy figures recorded by script, not by hand (issue 44). The committed
copy_bandwidth_dd9f04a.json is marked hand-made; the script reads the same printed lines into numbers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))
import copy_bandwidth as cb  # noqa: E402

sys.path.pop(0)
HAND_MADE = REPO / "docs" / "results" / "copy_bandwidth_dd9f04a.json"


def test_the_hand_made_record_says_so_and_its_lines_parse_into_its_figures():
    doc = json.loads(HAND_MADE.read_text())
    assert doc["hand_made"] is True
    parsed = cb.parse(doc["output_lines"])
    assert [(r["mib"], r["rep"]) for r in parsed["copies"]] == [(m, r) for m in (16.0, 256.0, 1024.0) for r in (0.0, 1.0)]
    gib = parsed["copies"][4]
    assert (gib["pageable_h2d"], gib["pinned_h2d"], gib["pinned_d2h"], gib["malloc_host_s"]) == (8.4, 55.5, 55.2, 0.488)
    assert [r["registered_h2d"] for r in parsed["registered"]] == [51.0, 47.2, 54.8]
    with pytest.raises(ValueError, match="does not know"):
        cb.parse(["16 MiB rep 0: pageable H2D 8.6 GB/s"])


def test_the_script_records_what_the_program_prints_with_fake_program(tmp_path):
    fake = tmp_path / "copy_bandwidth"
    lines = json.loads(HAND_MADE.read_text())["output_lines"][:3]
    fake.write_text("#!/bin/sh\n" + "".join(f"echo '{line}'\n" for line in lines))
    fake.chmod(0o755)
    out = tmp_path / "copy_bandwidth.json"
    run = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "copy_bandwidth.py"), "--binary", str(fake), "--output", str(out)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    doc = json.loads(out.read_text())
    assert doc["hand_made"] is False and doc["output_lines"] == lines
    assert [r["pinned_h2d"] for r in doc["copies"]] == [52.9, 53.1] and doc["registered"][0]["register_s"] == 0.001
    assert "--binary" in doc["provenance"]["command"] and doc["provenance"]["git_commit"]


@pytest.mark.gpu
def test_copy_bandwidth_builds_runs_and_records_on_the_gpu(tmp_path):
    out = tmp_path / "copy_bandwidth.json"
    run = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "copy_bandwidth.py"), "--output", str(out)], capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stdout + run.stderr
    doc = json.loads(out.read_text())
    assert len(doc["copies"]) == 6 and len(doc["registered"]) == 3 and doc["provenance"]["gpu"] != "unknown"
    assert all(r["pinned_h2d"] > 0 and r["pageable_h2d"] > 0 for r in doc["copies"])
