"""scripts/baseline_figures.py (the suite issues' figures from bench run files) on hand-made result files:
the largest paper size is the one with the largest complexity, a variant measured twice keeps the last
file's result, and only baseline results at paper sizes count."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _result(task: str, precision: str, wall: float, rows: list[tuple[int, float, float]], **kw) -> dict:
    """rows: (complexity, baseline median µs, roofline floor µs)."""
    return {
        "task": task,
        "precision": precision,
        "implementation": kw.get("implementation", "baseline"),
        "size_set": kw.get("size_set", "paper"),
        "verdict": kw.get("verdict", "ok"),
        "wall_seconds": wall,
        "gpu": {"name": "NVIDIA H200", "driver_version": "580.159.04"},
        "rows": [
            {
                "params": {"N": c},
                "complexity": c,
                "passed": True,
                "baseline": {"median_us": us},
                "roofline_floor_us": floor,
                "baseline_roofline_pct": 100 * floor / us,
            }
            for c, us, floor in rows
        ],
    }


def test_baseline_figures_from_two_run_files(tmp_path):
    first = {
        "provenance": {"git_commit": "aaa"},
        "results": [
            _result("vector_add", "fp32", 9.0, [(10, 5.0, 1.0)], verdict="wrong_answer"),  # measured again below
            _result("vector_add", "bf16", 2.0, [(300, 50.0, 5.0), (1000, 40.0, 10.0), (20, 4.0, 2.0)]),
            _result("vector_add", "bf16", 7.0, [(5, 1.0, 1.0)], implementation="vendor"),  # not a baseline
            _result("dot_product", "fp32", 3.0, [(5, 1.0, 1.0)], size_set="large"),  # not paper
        ],
    }
    second = {"provenance": {"git_commit": "bbb"}, "results": [_result("vector_add", "fp32", 4.0, [(10, 20.0, 2.0)])]}
    paths = []
    for i, doc in enumerate((first, second)):
        paths.append(tmp_path / f"run{i}.json")
        paths[-1].write_text(json.dumps(doc))
    out = tmp_path / "figures.json"
    subprocess.run([sys.executable, str(ROOT / "scripts" / "baseline_figures.py"), *map(str, paths), "--output", str(out)], check=True)
    doc = json.loads(out.read_text())
    assert doc["variants_measured"] == 2 and doc["all_ok"] and doc["not_ok"] == []
    bf16 = doc["variants"]["vector_add/bf16"]
    assert bf16["largest_paper_size"] == {"N": 1000} and bf16["baseline_roofline_pct"] == 25.0  # 10 / 40
    fp32 = doc["variants"]["vector_add/fp32"]
    assert fp32["verdict"] == "ok" and fp32["wall_s"] == 4.0 and fp32["baseline_roofline_pct"] == 10.0
    assert doc["wall_s_per_variant"] == {"mean": 3.0, "median": 3.0, "max": 4.0, "target_mean": 3.0}
    assert [i["provenance"]["git_commit"] for i in doc["inputs"]] == ["aaa", "bbb"]
    assert doc["gpu"] == ["NVIDIA H200"] and "| vector_add/bf16 | ok | 3/3 |" in out.with_suffix(".md").read_text()


def test_compare_suites_splits_the_first_timed_size_from_the_others(tmp_path):
    old = {"results": [_result("t", "fp32", 1.0, [(1, 10.0, 1.0), (2, 20.0, 1.0), (3, 40.0, 1.0)])]}
    new = {
        "results": [
            _result("t", "fp32", 1.0, [(1, 12.0, 1.0), (2, 20.0, 1.0), (3, 30.0, 1.0)]),
            _result("t", "fp32", 1.0, [(1, 1.0, 1.0)], implementation="vendor"),  # not a baseline: left out
            _result("u", "fp32", 1.0, [(1, 5.0, 1.0)]),  # not in the old run: left out
        ]
    }
    (tmp_path / "old.json").write_text(json.dumps(old))
    (tmp_path / "new.json").write_text(json.dumps(new))
    out = tmp_path / "cmp.json"
    subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts/compare_suites.py"),
            "--old",
            str(tmp_path / "old.json"),
            "--new",
            str(tmp_path / "new.json"),
            "--output",
            str(out),
        ],
        check=True,
        capture_output=True,
    )
    ratios = json.loads(out.read_text())["ratio_new_over_old"]
    assert ratios["first_timed_size"] == {"n": 1}
    assert ratios["other_sizes"]["n"] == 2 and ratios["other_sizes"]["median"] == 0.875  # 1.0 and 0.75
