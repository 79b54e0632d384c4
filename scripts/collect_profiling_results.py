"""Turn the device's profiling.tar.gz (scripts/device_profiling.sh) into docs/results/profiling_h200.json.

    python scripts/collect_profiling_results.py profiling.tar.gz --commit SHA --output docs/results/profiling_h200.json

Keeps the measured data as it came back (labelled-set scores, fitted thresholds, one profile's wall
time, the environment) and adds, computed here on the CPU from the profiles in run.json, the token
counts (tiktoken o200k_base) of the filtered and the full text for every profiled baseline.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tarfile
from pathlib import Path

from profiling.filter import render
from profiling.otsu import load_corpus
from profiling.tokens import count_tokens


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("tarball", type=Path)
    ap.add_argument("--commit", required=True, help="git commit the device ran")
    ap.add_argument("--command", default="BASELINE_BUDGET_S=20 bash scripts/device_profiling.sh")
    ap.add_argument("--output", type=Path, required=True)
    args = ap.parse_args()
    work = args.output.parent / ".collect"
    work.mkdir(parents=True, exist_ok=True)
    with tarfile.open(args.tarball) as tar:
        tar.extractall(work, filter="data")
    env = dict(line.split(": ", 1) for line in (work / "env.txt").read_text().splitlines() if ": " in line)
    gpu_lines = [line for line in (work / "env.txt").read_text().splitlines() if line.startswith("GPU ") or line.count(",") == 2]
    reports = load_corpus(work / "run.json")
    tokens = []
    for r in reports:
        filtered = count_tokens(render(r, "filtered"))
        full = count_tokens(render(r, "full"))
        tokens.append(
            {
                "report": f"{r.task}/{r.precision}/{r.impl}",
                "params": r.params,
                "bottleneck": r.bottleneck.value if r.bottleneck else None,
                "filtered_tokens": filtered.tokens,
                "full_tokens": full.tokens,
                "ratio_pct": round(100 * filtered.tokens / full.tokens, 2),
                "exact": filtered.exact and full.exact,
            }
        )
    doc = {
        "provenance": {
            "command": args.command,
            "git_commit": args.commit,
            "date": env.get("date", ""),
            "gpu_and_driver": gpu_lines,
            "ncu": env.get("ncu", ""),
            "nvcc": env.get("nvcc", ""),
            "collected_by": "scripts/collect_profiling_results.py",
        },
        "labelled_set_raw_csvs": "tests/fixtures/ncu/labelled/*.csv (the raw pages as ncu wrote them)",
        "labelled_score_text": (work / "labelled_score.txt").read_text() if (work / "labelled_score.txt").exists() else "",
        "labelled_score_with_fitted_thresholds_text": (work / "labelled_score_fitted.txt").read_text()
        if (work / "labelled_score_fitted.txt").exists()
        else "",
        "one_profile": json.loads((work / "one_profile.json").read_text()).get("profile_wall_s")
        if (work / "one_profile.json").exists()
        else None,
        "one_profile_text": (work / "one_profile_warm.txt").read_text() if (work / "one_profile_warm.txt").exists() else "",
        "thresholds_fitted_on_baselines": json.loads((work / "thresholds.json").read_text()),
        "thresholds_fitted_on_labelled": json.loads((work / "thresholds_labelled.json").read_text()),
        "baseline_classes": [
            {"report": f"{r.task}/{r.precision}/{r.impl}", "class": r.bottleneck.value if r.bottleneck else None} for r in reports
        ],
        "tokens": {
            "encoding": "o200k_base",
            "rows": tokens,
            "median_ratio_pct": statistics.median(t["ratio_pct"] for t in tokens) if tokens else None,
            "target_pct": 20,
        },
        "summary_text": (work / "summary.txt").read_text(),
    }
    args.output.write_text(json.dumps(doc, indent=1, default=str))
    for p in sorted(work.rglob("*"), reverse=True):
        p.unlink() if p.is_file() else p.rmdir()
    work.rmdir()
    print(json.dumps(doc["tokens"], indent=1))


if __name__ == "__main__":
    main()
