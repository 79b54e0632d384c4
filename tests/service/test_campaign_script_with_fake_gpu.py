"""scripts/campaign_h200.py: the scripted model's known correct kernels, and the whole script on a
FAKE GPU (real nvcc compiles, made-up timings) as a CPU smoke test."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bench_tasks import all_tasks

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

from campaign_h200 import known_correct_kernel  # noqa: E402


@pytest.mark.parametrize("task", all_tasks(), ids=lambda t: t.name)
def test_known_correct_kernel_is_the_baseline_under_the_optimized_entry(task):
    for precision in task.prototypes:
        v = task.variant(precision)
        source = known_correct_kernel(task.name, precision)
        assert re.search(rf"\b{re.escape(v.candidate_entry)}\b", source)
        assert not re.search(rf"\b{re.escape(v.entry)}\b", source)
        assert "fprintf(stderr" not in source
        # nothing else changed: renaming back (and ignoring removed prints) gives the baseline
        back = re.sub(rf"\b{re.escape(v.candidate_entry)}\b", v.entry, source)
        assert back.replace("/* error print removed by the scripted model */;", "") == re.sub(
            r"(?:\bstd::)?\bfprintf\s*\(\s*stderr\b[^;]*;", "", task.baseline_source()
        )


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_campaign_script_stops_and_resumes_with_fake_gpu(tmp_path):
    out = tmp_path / "out"
    script = [sys.executable, str(ROOT / "scripts" / "campaign_h200.py"), "--out", str(out), "--fake-gpu", "--poll", "0.5"]
    first = subprocess.run(
        [*script, "--variant", "vector_add/fp32", "--variant", "RELU/bf16", "--stop-after", "1"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=540,
    )
    assert first.returncode == 0, first.stdout[-2000:] + first.stderr[-3000:]
    assert "continue with --resume" in first.stdout and not (out / "figures.json").exists()
    second = subprocess.run([*script, "--resume"], cwd=ROOT, capture_output=True, text=True, timeout=540)
    assert second.returncode == 0, second.stdout[-2000:] + second.stderr[-3000:]
    assert "resumed (running)" in second.stdout
    figures = json.loads((out / "figures.json").read_text())
    assert figures["status"] == "finished" and figures["variants"] == 2 and figures["correct"] == 2
    assert figures["gpu"].startswith("FAKE") and figures["suite"]["sittings"] == 2
    for job in figures["jobs"]:
        assert job["best_p"] == 1.0  # FakeGpuEvaluator: no marker, speedup 1
        assert job["evaluation_s"] > 0 and set(job["evaluation_parts_s"]) >= {"compile", "evaluate"}
        if job["one_sitting"]:
            assert job["wall_s"] == pytest.approx(job["evaluation_s"] + job["llm_s"] + job["overhead_s"])
        else:
            assert job["overhead_s"] is None
    suite = figures["suite"]
    assert suite["sum_of_evaluations_s"] == pytest.approx(sum(j["evaluation_s"] for j in figures["jobs"]))
    md = (out / "report.md").read_text()
    assert "| vector_add/fp32 | " in md and "| RELU/bf16 | " in md
    assert (out / "overhead.svg").read_text().startswith("<svg") and (out / "suite_wall.svg").exists()
