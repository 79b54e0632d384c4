"""Figures for the harness (issue 2), measured on the GPU machine; writes one JSON document.

    python3 scripts/harness_figures.py --output docs/results/harness_figures.json

1. wall time to evaluate one candidate over all paper sizes, compile included (empty cache);
2. the same baseline/candidate pair evaluated 5 times: max/min spread of each size's speedup;
3. harness time vs ncu's gpu__time_duration for one single-kernel task (vector_add) at four sizes.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from bench_tasks.harness import evaluate
from bench_tasks.provenance import provenance
from profiling.ncu import profile_kernel
from settings import HarnessSettings, get_harness_settings

ROOT = Path(__file__).resolve().parent.parent
FAST = (ROOT / "tests" / "bench" / "candidates" / "fast.cu").read_text()


def wall_time_one_candidate(settings: HarnessSettings) -> dict:
    fresh = settings.model_copy(update={"cache_dir": Path(tempfile.mkdtemp(prefix="cm-fig-cache-"))})
    t0 = time.monotonic()
    result = evaluate("vector_add", "fp32", FAST, "paper", settings=fresh)
    wall = time.monotonic() - t0
    return {
        "task": "vector_add/fp32",
        "candidate": "tests/bench/candidates/fast.cu",
        "sizes": "paper",
        "verdict": result.verdict.value,
        "wall_seconds": round(wall, 2),
        "target_seconds": 20,
        "met": wall <= 20,
        "gpu": result.gpu.model_dump() if result.gpu else None,
    }


def speedup_spread(settings: HarnessSettings, repeats: int = 5) -> dict:
    settings = settings.model_copy(update={"max_seconds_per_size": 1.0})
    runs = [evaluate("vector_add", "fp32", FAST, "all", settings=settings) for _ in range(repeats)]
    rows = []
    for i, params in enumerate(r.params for r in runs[0].rows):
        speedups = [run.rows[i].speedup for run in runs]
        cand_us = [run.rows[i].candidate.median_us for run in runs]
        base_us = [run.rows[i].baseline.median_us for run in runs]
        spread = (max(speedups) / min(speedups) - 1) * 100
        long_enough = min(min(cand_us), min(base_us)) >= 10.0
        rows.append(
            {
                "params": params,
                "speedups": speedups,
                "spread_pct": round(spread, 3),
                "candidate_median_us": cand_us,
                "baseline_median_us": base_us,
                "kernel_runs_10us_or_more": long_enough,
                "met": spread <= 2.0 if long_enough else None,
            }
        )
    return {"task": "vector_add/fp32", "repeats": repeats, "target_spread_pct": 2.0, "rows": rows}


def harness_vs_ncu(settings: HarnessSettings, sizes=(262144, 4194304, 16777216, 67108864), ncu_runs: int = 3) -> dict:
    """The harness's median against ncu's gpu__time_duration (median of `ncu_runs` profiled calls).

    Both vector_add implementations are single-kernel: the baseline (one block; its entry point
    synchronises the device itself, as the published one does, so its call carries that cost) and
    tests/bench/candidates/fast.cu (no synchronise inside: the harness's own overhead alone).
    ncu runs through profiling.ncu (CUDAMASTER_PROFILING__NCU, else ncu on PATH).
    """
    rows = []
    for n in sizes:
        params = {"N": n}
        harness = evaluate("vector_add", "fp32", FAST, [params], settings=settings)
        for impl, source, stats in (("baseline", None, harness.rows[0].baseline), ("candidate fast.cu", FAST, harness.rows[0].candidate)):
            reports = [profile_kernel("vector_add", "fp32", source, params, harness_settings=settings) for _ in range(ncu_runs)]
            measured = [r.duration_ns / 1e3 for r in reports]
            ncu_us = statistics.median(measured)
            diff = (stats.median_us / ncu_us - 1) * 100
            rows.append(
                {
                    "impl": impl,
                    "params": params,
                    "ncu_gpu_time_us": measured,
                    "ncu_median_us": ncu_us,
                    "kernels": len(reports[0].kernels),
                    "harness_median_us": stats.median_us,
                    "harness_iqr_us": stats.iqr_us,
                    "harness_tail_median_us": stats.tail_median_us,
                    "difference_pct": round(diff, 3),
                    "met": abs(diff) <= 5.0,
                }
            )
    return {"task": "vector_add/fp32", "target_pct": 5.0, "rows": rows}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--output", type=Path, required=True)
    parser.add_argument("--only", action="append", help="figure name to run (repeatable); default: all")
    args = parser.parse_args()
    settings = get_harness_settings()  # the settings tree's harness section (CUDAMASTER_HARNESS__*)
    doc = {"provenance": provenance(), "figures": {}}
    for name, fn in [
        ("wall_time_one_candidate", wall_time_one_candidate),
        ("speedup_spread_5_runs", speedup_spread),
        ("harness_vs_ncu", harness_vs_ncu),
    ]:
        if args.only and name not in args.only:
            continue
        t0 = time.monotonic()
        try:
            doc["figures"][name] = fn(settings)
        except Exception as exc:  # noqa: BLE001 - a figure that fails is recorded as such, the others still run
            doc["figures"][name] = {"error": f"{type(exc).__name__}: {exc}"}
        print(f"{name}: {json.dumps(doc['figures'][name])[:600]} ({time.monotonic() - t0:.1f} s)", flush=True)
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(doc, indent=1))  # after every figure: a later one may be cut short


if __name__ == "__main__":
    main()
