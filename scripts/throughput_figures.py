"""Throughput figures for the harness (issue 13, part 2); writes one JSON document with its provenance.

    python3 scripts/throughput_figures.py --output docs/results/throughput_figures.json [--only STEP ...]

Steps (each recorded on its own; a failing one does not stop the next):
  compile  CPU only: the runtime's objects once, then per variant the baseline, the driver (host C++
           against cm_driver.h) and the link, from an empty cache, one after the other.
  build    CPU only: the compile stage of one candidate evaluation (the baseline's own source as the candidate)
           from an empty cache, as evaluate() runs it: everything side by side, then the link; twice each,
           stencil_2d/fp32 and matrix_mul/fp32 unless --task says otherwise.
  data     CPU only: per variant at paper sizes, seconds to draw the three check datasets and to
           compute their float64 references (sampled where the harness samples), cold.
  wall     GPU: one candidate evaluation at paper sizes (the baseline's own source as the candidate) of
           stencil_2d/fp32 and matrix_mul/fp32: empty cache, then again with compiled objects and the
           data cache warm; the per-stage seconds of each. Target: <= 20 s.
  spread   GPU: the same pair (baseline vs itself) evaluated 5 times, spmv_csr/fp32 and matrix_mul/fp32
           at paper sizes: per size, the max/min spread of the speedup. Target: <= 1 % for kernels >= 10 us.
  suite    GPU: `cudamaster bench run --sizes paper -j CPUS` over every variant (baselines, correctness and
           timing, compile included, empty compile and data caches), as one command: its wall time, per-stage
           totals, the disk's free space. Target: <= 300 s. With --suite-limit-s the run is stopped there
           and what it finished is still recorded (`cut`); bench run's own results file is kept beside
           --output (<output>.run.json), saved after every variant.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench_tasks import all_tasks, load_task  # noqa: E402
from bench_tasks.harness import compile as cc  # noqa: E402
from bench_tasks.harness import evaluate  # noqa: E402
from bench_tasks.harness.checks import Case, choose_sample, read_inputs, reference  # noqa: E402
from bench_tasks.harness.datacache import DataCache  # noqa: E402
from bench_tasks.harness.driver import driver_source  # noqa: E402
from bench_tasks.provenance import provenance  # noqa: E402
from settings import HarnessSettings, get_harness_settings  # noqa: E402


def _fresh(settings: HarnessSettings) -> HarnessSettings:
    """Empty compile and data caches (the data cache lives under scratch_root, which the sandbox user traverses)."""
    cache = Path(tempfile.mkdtemp(prefix="cm-tp-cache-"))
    cache.chmod(0o755)
    (cache / "scratch").mkdir(mode=0o755)
    return settings.model_copy(update={"cache_dir": cache, "scratch_root": cache / "scratch"})


def _variants(only: list[str] | None) -> list:
    return [v for t in all_tasks() for v in t.variants() if not only or t.name in only]


def compile_times(settings: HarnessSettings, tasks: list[str] | None) -> dict:
    settings = _fresh(settings)
    t0 = time.monotonic()
    cc.compile_runtime(settings)
    runtime_s = time.monotonic() - t0
    rows = []
    for variant in _variants(tasks):
        t0 = time.monotonic()
        base = cc.compile_baseline(variant, settings)
        t1 = time.monotonic()
        cc.build_driver(variant, driver_source(variant, False), base, None, settings)
        rows.append({"variant": variant.key, "baseline_s": round(t1 - t0, 2), "driver_and_link_s": round(time.monotonic() - t1, 2)})
    shutil.rmtree(settings.cache_dir, ignore_errors=True)
    total = sum(r["baseline_s"] + r["driver_and_link_s"] for r in rows)
    return {
        "cores": os.cpu_count(),
        "runtime_object_s": round(runtime_s, 2),
        "variants": rows,
        "total_serial_s": round(total + runtime_s, 1),
    }


def data_times(settings: HarnessSettings, tasks: list[str] | None) -> dict:
    settings = _fresh(settings)
    cache = DataCache(settings)
    rows = []
    import numpy as np

    for variant in _variants(tasks):
        draw_s = ref_s = 0.0
        for params in variant.task.size_list("paper"):
            case = Case(0, params, [])
            choose_sample(variant, case, settings, np.random.default_rng(0))
            for seed in settings.seeds:
                t0 = time.monotonic()
                directory = cache.dataset(variant, params, seed, settings.cache_dir / "x")
                t1 = time.monotonic()
                reference(variant, case, read_inputs(variant, directory, params))
                draw_s, ref_s = draw_s + t1 - t0, ref_s + time.monotonic() - t1
        rows.append({"variant": variant.key, "draw_3_seeds_s": round(draw_s, 2), "references_3_seeds_s": round(ref_s, 2)})
    shutil.rmtree(settings.cache_dir, ignore_errors=True)
    return {"cores": os.cpu_count(), "variants": rows}


def _self_candidate(task: str, precision: str) -> str:
    variant = load_task(task).variant(precision)
    return variant.task.baseline_source().replace(f"void {variant.entry}(", f"void {variant.candidate_entry}(")


def cold_build(settings: HarnessSettings, tasks: list[str] | None, repeats: int = 2) -> dict:
    """The compile stage of one candidate evaluation from an empty compile cache, as evaluate() runs it: the runtime's
    two objects, the baseline, the driver's host code and the candidate side by side, then the link. No GPU needed."""
    from bench_tasks.harness.evaluate import _build

    rows = []
    for task in tasks or ["stencil_2d", "matrix_mul"]:
        variant = load_task(task).variant("fp32")
        for _ in range(repeats):
            fresh = _fresh(settings)
            t0 = time.monotonic()
            built = _build(variant, _self_candidate(task, "fp32"), fresh, None)
            rows.append({"variant": variant.key, "built": isinstance(built, Path), "seconds": round(time.monotonic() - t0, 2)})
            shutil.rmtree(fresh.cache_dir, ignore_errors=True)
    return {"cores": os.cpu_count(), "rows": rows}


def wall_one_candidate(settings: HarnessSettings, tasks: list[str] | None) -> dict:
    rows = []
    for task in tasks or ["stencil_2d", "matrix_mul"]:
        fresh = _fresh(settings)
        source = _self_candidate(task, "fp32")
        for cache_state in ("empty", "warm"):
            t0 = time.monotonic()
            result = evaluate(task, "fp32", source, "paper", settings=fresh)
            wall = time.monotonic() - t0
            rows.append(
                {
                    "variant": f"{task}/fp32",
                    "cache": cache_state,
                    "verdict": result.verdict.value,
                    "wall_s": round(wall, 2),
                    "met": wall <= 20.0,
                    "stages": result.stages,
                    "gpu": result.gpu.model_dump() if result.gpu else None,
                    "timed_checks": sum(c.stage == "timed_call" for r in result.rows for c in r.checks),
                }
            )
        shutil.rmtree(fresh.cache_dir, ignore_errors=True)
    return {"target_s": 20.0, "rows": rows}


def spread(settings: HarnessSettings, tasks: list[str] | None, repeats: int = 5) -> dict:
    out = []
    for task in tasks or ["spmv_csr", "matrix_mul"]:
        source = _self_candidate(task, "fp32")
        runs = [evaluate(task, "fp32", source, "paper", settings=settings) for _ in range(repeats)]
        rows = []
        for i, params in enumerate(r.params for r in runs[0].rows):
            speedups = [run.rows[i].speedup for run in runs]
            times = [min(run.rows[i].candidate.median_us, run.rows[i].baseline.median_us) for run in runs]
            pct = (max(speedups) / min(speedups) - 1) * 100
            long_enough = min(times) >= 10.0
            rows.append(
                {
                    "params": params,
                    "speedups": speedups,
                    "spread_pct": round(pct, 3),
                    "min_median_us": round(min(times), 2),
                    "pairs": [run.rows[i].candidate.samples for run in runs],  # how long the stop rule ran
                    "met": pct <= 1.0 if long_enough else None,
                }
            )
        out.append(
            {
                "variant": f"{task}/fp32",
                "verdicts": [r.verdict.value for r in runs],
                "wall_s": [r.wall_seconds for r in runs],
                "rows": rows,
            }
        )
    timing = {k: getattr(settings, k) for k in ("min_pairs", "min_seconds_per_size", "max_seconds_per_size", "target_rse")}
    return {"repeats": repeats, "target_pct": 1.0, "pairs": "baseline against itself", "timing_settings": timing, "tasks": out}


def _suite_command(out: Path, tasks: list[str] | None) -> list[str]:
    command = [sys.executable, "-m", "app.cli", "bench", "run", "--sizes", "paper", "-j", str(os.cpu_count() or 1), "-o", str(out)]
    for t in tasks or []:
        command += ["--task", t]
    return command


SUITE_LIMIT_S: float | None = None  # --suite-limit-s
SUITE_RUN_FILE: Path | None = None  # bench run's results file (beside --output)


def gpu_path(results: list[dict], wall: float) -> dict:
    """Where the suite's wall time went as the GPU saw it: the drivers' GPU work (each driver's seconds after its
    start-up, which overlaps the previous driver), the gaps between one driver's exit and the next one's GPU work,
    and the rest: before the first driver's GPU work and after the last one's exit (compiles, draws, the last
    variants' output checks). Variants recorded before `driver_startup` existed count their whole driver time."""
    busy = sum(r.get("stages", {}).get("driver", 0.0) - r.get("stages", {}).get("driver_startup", 0.0) for r in results)
    gaps = sum(r.get("stages", {}).get("pipeline_gpu_gap", 0.0) for r in results)
    return {"gpu_busy_s": round(busy, 1), "gpu_gaps_s": round(gaps, 1), "outside_s": round(wall - busy - gaps, 1)}


def suite(settings: HarnessSettings, tasks: list[str] | None) -> dict:
    root = Path(tempfile.mkdtemp(prefix="cm-tp-suite-"))
    root.chmod(0o755)  # the sandbox user traverses it to the data cache
    (root / "scratch").mkdir(mode=0o755)
    out = SUITE_RUN_FILE or root / "suite.json"
    out.unlink(missing_ok=True)
    command = _suite_command(out, tasks)
    # empty compile and data caches: cache_dir (objects, drivers, references) and scratch_root (datasets) fresh
    env = dict(os.environ, CUDAMASTER_HARNESS__CACHE_DIR=str(root / "cache"), CUDAMASTER_HARNESS__SCRATCH_ROOT=str(root / "scratch"))
    free = {"start": shutil.disk_usage(root).free, "min": shutil.disk_usage(root).free}
    stop = threading.Event()

    def watch_disk() -> None:  # the suite's datasets once filled the H200 machine's disk
        while not stop.wait(1.0):
            free["min"] = min(free["min"], shutil.disk_usage(root).free)

    watcher = threading.Thread(target=watch_disk, daemon=True)
    watcher.start()
    log = root / "bench_run.log"
    t0 = time.monotonic()
    with open(log, "w") as sink:
        proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=sink, stderr=subprocess.STDOUT, start_new_session=True)
        cut = False
        try:
            rc = proc.wait(timeout=SUITE_LIMIT_S)
        except subprocess.TimeoutExpired:  # stop it (its sandboxed drivers die with it) and keep what it finished
            cut = True
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                rc = proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                rc = proc.wait()
    wall = time.monotonic() - t0
    stop.set()
    watcher.join()
    doc = json.loads(out.read_text()) if out.exists() else {"results": []}
    results = doc.get("results", [])
    stage_totals: dict[str, float] = {}
    for r in results:
        for k, v in r.get("stages", {}).items():
            stage_totals[k] = round(stage_totals.get(k, 0.0) + v, 2)
    total = sum(1 for t in all_tasks() if not tasks or t.name in tasks for _ in t.variants())
    tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
    shutil.rmtree(root, ignore_errors=True)
    return {
        "command": " ".join(command[1:]),
        "exit_code": rc,
        "cut": cut,
        "limit_s": SUITE_LIMIT_S,
        "variants": len(results),
        "variants_total": total,
        "wall_s": round(wall, 1),
        "target_s": 300.0,
        "met": wall <= 300.0 and rc == 0 and not cut,
        "sum_of_variant_walls_s": round(sum(r["wall_seconds"] for r in results), 1),
        "not_ok": [f"{r['task']}/{r['precision']}: {r['message'][:200]}" for r in results if r["verdict"] != "ok"],
        "per_variant_wall_s": {f"{r['task']}/{r['precision']}": r["wall_seconds"] for r in results},
        "stage_totals_s": stage_totals,
        "gpu_path_s": gpu_path(results, wall),
        "disk_free_gb": {"start": round(free["start"] / 1e9, 1), "min": round(free["min"] / 1e9, 1)},
        "run_file": str(out) if SUITE_RUN_FILE else None,
        "log_tail": tail,
    }


STEPS = {"compile": compile_times, "build": cold_build, "data": data_times, "wall": wall_one_candidate, "spread": spread, "suite": suite}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--output", type=Path, required=True)
    parser.add_argument("--only", action="append", choices=sorted(STEPS), help="step to run (repeatable, run in this order); default: all")
    parser.add_argument("--task", action="append", help="restrict the steps to these tasks (repeatable)")
    parser.add_argument("--suite-limit-s", type=float, help="suite: stop bench run after this long and record what it finished")
    args = parser.parse_args()
    global SUITE_LIMIT_S, SUITE_RUN_FILE
    SUITE_LIMIT_S = args.suite_limit_s
    SUITE_RUN_FILE = args.output.with_name(args.output.stem + ".run.json")
    args.output.parent.mkdir(parents=True, exist_ok=True)
    settings = get_harness_settings()  # the settings tree's harness section (CUDAMASTER_HARNESS__*)
    from bench_tasks.harness.evaluate import gpu_status, nvidia_driver_version

    doc = {"provenance": provenance(), "gpu": gpu_status(settings)[1], "nvidia_driver": nvidia_driver_version(), "figures": {}}
    for name in dict.fromkeys(args.only or STEPS):  # in the order asked for: a step cut by a time limit comes last
        fn = STEPS[name]
        t0 = time.monotonic()
        try:
            doc["figures"][name] = fn(settings, args.task)
        except Exception as exc:  # noqa: BLE001 - a step that fails is recorded as such; the others still run
            doc["figures"][name] = {"error": f"{type(exc).__name__}: {exc}"}
        doc["figures"][name]["step_seconds"] = round(time.monotonic() - t0, 1)
        print(f"{name}: {json.dumps(doc['figures'][name])[:800]}", flush=True)
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(doc, indent=1))  # after every step: a later one may be cut short


if __name__ == "__main__":
    main()
