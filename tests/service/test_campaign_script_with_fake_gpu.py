"""scripts/campaign_h200.py: the scripted model's known correct kernels, and the whole script on a
FAKE GPU (real nvcc compiles, made-up timings) as a CPU smoke test."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bench_tasks import all_tasks

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

from campaign_figures import EVALUATOR_NODES, between_evaluator_calls_s  # noqa: E402
from campaign_h200 import known_correct_kernel  # noqa: E402


@pytest.mark.parametrize("task", all_tasks(), ids=lambda t: t.name)
def test_known_correct_kernel_is_the_baseline_under_the_optimized_entry(task):
    for precision in task.prototypes:
        v = task.variant(precision)
        source = known_correct_kernel(task.name, precision)
        assert re.search(rf"\b{re.escape(v.candidate_entry)}\b", source)
        assert not re.search(rf"\b{re.escape(v.entry)}\b", source)
        # nothing else changed: renaming back gives the baseline
        assert re.sub(rf"\b{re.escape(v.candidate_entry)}\b", v.entry, source) == task.baseline_source()


def test_service_time_between_evaluator_calls_counts_only_the_other_nodes_spans_less_llm_time():
    start = datetime(2026, 1, 1, tzinfo=UTC)

    def at(s):
        return start + timedelta(seconds=s)

    nodes = [("baseline", at(10)), ("plan", at(13)), ("code", at(20)), ("compile", at(30)), ("verify", at(50)), ("round_end", at(50.5))]
    nodes += [("finish", at(51))]
    assert {"baseline", "compile", "verify", "profile"} == EVALUATOR_NODES
    # plan 3 + code 7 + round_end 0.5 + finish 0.5, less 9 s of LLM time, + 1.5 s after the last node event
    assert between_evaluator_calls_s(start, at(52.5), nodes, llm_s=9.0) == pytest.approx(3.5)
    assert between_evaluator_calls_s(start, at(2), [], llm_s=0.0) == pytest.approx(2.0)  # no node finished


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_campaign_script_stops_and_resumes_with_fake_gpu(tmp_path):
    out = tmp_path / "out"
    script = [sys.executable, str(ROOT / "scripts" / "campaign_h200.py"), "--out", str(out), "--fake-gpu", "--poll", "0.5"]
    first = subprocess.run(
        [*script, "--variant", "vector_add/fp32", "--variant", "RELU/bf16", "--max-in-flight", "1", "--stop-after", "1"],
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
        assert job["gpu_wait_s"] >= job["gpu_pool_wait_s"] >= 0
        if job["one_sitting"]:
            assert job["wall_s"] == pytest.approx(job["evaluation_s"] + job["gpu_wait_s"] + job["llm_s"] + job["overhead_s"])
            assert 0 < job["between_evaluator_calls_s"] < job["wall_s"]
            assert job["between_evaluator_calls_pct_of_evaluation"] == pytest.approx(
                100 * job["between_evaluator_calls_s"] / job["evaluate_and_compile_s"]
            )
        else:
            assert job["overhead_s"] is None and job["between_evaluator_calls_s"] is None
    seconds = json.loads((out / "evaluator_seconds.json").read_text())
    assert all("pool_wait" in parts for parts in seconds.values())  # the service's GPU pool reported its waits
    one_sitting = [j for j in figures["jobs"] if j["one_sitting"]]
    assert one_sitting  # --max-in-flight 1: the job that did not start in the first sitting ran all in the second
    between = figures["between_evaluator_calls_pct_of_evaluation"]
    assert between["jobs"] == len(one_sitting) and between["max"] == max(
        j["between_evaluator_calls_pct_of_evaluation"] for j in one_sitting
    )
    assert "baseline node's span" in between["note"]
    suite = figures["suite"]
    assert suite["sum_of_evaluations_s"] == pytest.approx(sum(j["evaluation_s"] for j in figures["jobs"]))
    md = (out / "report.md").read_text()
    assert "| vector_add/fp32 | " in md and "| RELU/bf16 | " in md
    assert (out / "overhead.svg").read_text().startswith("<svg") and (out / "suite_wall.svg").exists()

    # --figures-only: the same figures from DIR's files alone, with the recompute's provenance
    written = {name: (out / name).read_text() for name in ("report.md", "report.html", "report.json", "overhead.svg", "suite_wall.svg")}
    (out / "overhead.svg").unlink()
    again = subprocess.run([*script[:4], "--figures-only"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stdout[-2000:] + again.stderr[-3000:]
    recomputed = json.loads((out / "figures.json").read_text())
    assert recomputed["run_provenance"] == figures["provenance"]
    assert "--figures-only" in recomputed["provenance"]["command"] and "recomputed" in recomputed["provenance"]
    assert {k: v for k, v in recomputed.items() if k not in ("provenance", "run_provenance")} == {
        k: v for k, v in figures.items() if k != "provenance"
    }
    assert {name: (out / name).read_text() for name in written} == written
