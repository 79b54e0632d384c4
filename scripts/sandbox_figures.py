"""Figures for the sandbox (issue 9); writes one JSON document (benchmarks, not tests).

    python3 scripts/sandbox_figures.py --output docs/results/sandbox_figures.json [--no-gpu]

1. set-up cost of one sandboxed start: /bin/true through the sandbox vs directly (median of 30; target < 50 ms);
2. the sandboxed starts one new candidate costs (compile, symbol listing, objcopy, link, run) and the
   compile pipeline's wall time with and without the sandbox (empty cache each time, interleaved);
3. with a GPU: vector_add's baseline against tests/bench/candidates/fast.cu evaluated inside and outside the
   sandbox (alternating, `--repeats` each): per size, the speedups in each mode, and the difference of the
   medians next to the harness's own spread (max - min within a mode, and the reported IQR).
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from bench_tasks import load_task
from bench_tasks.harness import compile as cc
from bench_tasks.harness import compile_candidate, evaluate, gpu_status
from bench_tasks.harness import sandbox as sb
from bench_tasks.harness.driver import driver_source
from bench_tasks.harness.evaluate import nvidia_driver_version
from bench_tasks.harness.sandbox_check import setup_cost_ms
from bench_tasks.provenance import provenance
from settings import HarnessSettings, get_harness_settings

ROOT = Path(__file__).resolve().parent.parent
FAST = (ROOT / "tests" / "bench" / "candidates" / "fast.cu").read_text()


def modes(settings: HarnessSettings) -> dict[str, HarnessSettings]:
    return {
        "sandboxed": settings.model_copy(update={"sandbox": "bwrap"}),
        "unsandboxed": settings.model_copy(update={"sandbox": "none", "allow_unsandboxed": True}),
    }


def count_starts(fn) -> tuple[int, float]:
    """(sandboxed starts during fn(), its wall seconds)."""
    calls = []
    original = sb.Sandbox.start

    def counting(self, *args, **kwargs):
        calls.append(self.kind)
        return original(self, *args, **kwargs)

    sb.Sandbox.start = counting
    try:
        t0 = time.monotonic()
        fn()
        return len(calls), time.monotonic() - t0
    finally:
        sb.Sandbox.start = original


def compile_pipeline(settings: HarnessSettings, repeats: int) -> dict:
    """A new candidate (a unique comment defeats the cache): compile + listing + objcopy + link, per mode."""
    variant = load_task("vector_add").variant("fp32")
    out: dict[str, list[float]] = {m: [] for m in modes(settings)}
    starts = 0
    for i in range(repeats):
        for mode, s in modes(settings).items():
            s = s.model_copy(update={"cache_dir": Path(tempfile.mkdtemp(prefix="cm-fig-cache-"))})
            cc.compile_baseline(variant, s)  # the baseline and driver objects are cached in real use
            cc.build_driver(variant, driver_source(variant, False), cc.compile_baseline(variant, s), None, s)

            def one(s=s, i=i) -> None:
                outcome = compile_candidate(variant, FAST + f"\n// figure run {i} {time.time_ns()}\n", s)
                assert outcome.ok, outcome.message
                cc.build_driver(variant, driver_source(variant, True), cc.compile_baseline(variant, s), outcome.object_path, s)

            n, wall = count_starts(one)
            out[mode].append(round(wall, 3))
            if mode == "sandboxed":
                starts = n
            sb.remove_scratch(s.cache_dir)
    return {
        "what": "compile_candidate + build_driver of a new vector_add candidate (baseline and driver objects cached)",
        "sandboxed_starts": starts,
        "wall_s": out,
        "median_overhead_s": round(statistics.median(out["sandboxed"]) - statistics.median(out["unsandboxed"]), 3),
    }


def inside_vs_outside(settings: HarnessSettings, repeats: int, sizes: list[dict[str, int]]) -> dict:
    runs: dict[str, list] = {m: [] for m in modes(settings)}
    walls: dict[str, list[float]] = {m: [] for m in modes(settings)}
    for _ in range(repeats):
        for mode, s in modes(settings).items():
            t0 = time.monotonic()
            result = evaluate("vector_add", "fp32", FAST, sizes, settings=s)
            walls[mode].append(round(time.monotonic() - t0, 3))
            assert result.ok, (mode, result.verdict, result.message)
            runs[mode].append(result)
    rows = []
    for i, params in enumerate(sizes):
        row: dict = {"params": params}
        for mode, results in runs.items():
            speedups = [r.rows[i].speedup for r in results]
            row[mode] = {
                "speedups": [round(x, 4) for x in speedups],
                "median": round(statistics.median(speedups), 4),
                "spread": round(max(speedups) - min(speedups), 4),
                "reported_iqr": [round(r.rows[i].speedup_iqr or 0.0, 4) for r in results],
                "candidate_median_us": [round(r.rows[i].candidate.median_us, 3) for r in results],
            }
        diff = abs(row["sandboxed"]["median"] - row["unsandboxed"]["median"])
        own = max(
            row["sandboxed"]["spread"], row["unsandboxed"]["spread"], *row["sandboxed"]["reported_iqr"], *row["unsandboxed"]["reported_iqr"]
        )
        row["median_difference"] = round(diff, 4)
        row["harness_spread"] = round(own, 4)
        row["within_spread"] = diff <= own
        rows.append(row)
    gpu = runs["sandboxed"][0].gpu
    return {
        "task": "vector_add/fp32",
        "candidate": "tests/bench/candidates/fast.cu",
        "repeats": repeats,
        "gpu": gpu.model_dump() if gpu else None,
        "evaluate_wall_s": walls,
        "rows": rows,
        "all_within_spread": all(r["within_spread"] for r in rows),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--output", type=Path, required=True)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--no-gpu", action="store_true", help="only the CPU figures (1 and 2)")
    args = ap.parse_args()
    settings = get_harness_settings()  # the settings tree's harness section (CUDAMASTER_HARNESS__*)
    box = sb.sandbox_for(settings.model_copy(update={"sandbox": "bwrap"}))
    doc: dict = {"provenance": provenance(), "sandbox": box.describe(), "nvidia_driver": nvidia_driver_version()}
    cost = setup_cost_ms(box, settings, runs=30)
    doc["setup_cost"] = {**cost, "target_ms": 50, "met": cost["setup_ms"] < 50}
    print("set-up cost", doc["setup_cost"], flush=True)
    args.output.write_text(json.dumps(doc, indent=1))
    doc["compile_pipeline"] = compile_pipeline(settings, args.repeats)
    print("compile pipeline", doc["compile_pipeline"], flush=True)
    args.output.write_text(json.dumps(doc, indent=1))
    has_gpu, why = gpu_status(settings)
    if args.no_gpu or not has_gpu:
        doc["inside_vs_outside"] = f"skipped: {'--no-gpu' if args.no_gpu else why}"
    else:
        fast = settings.model_copy(update={"max_seconds_per_size": 1.0})
        doc["inside_vs_outside"] = inside_vs_outside(fast, args.repeats, [{"N": 65536}, {"N": 262144}, {"N": 4194304}, {"N": 16777216}])
        print("inside vs outside", json.dumps(doc["inside_vs_outside"]["rows"]), flush=True)
    args.output.write_text(json.dumps(doc, indent=1))
    print(f"written to {args.output}")


if __name__ == "__main__":
    main()
