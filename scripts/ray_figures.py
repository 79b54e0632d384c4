"""Ray figures (issue 15), a benchmark, not a test: one JSON document with its provenance.

    python3 scripts/ray_figures.py --output docs/results/ray_figures.json [--ray ADDRESS] [--all] [--repeats 5]

  overhead  per evaluation, what Ray adds: the caller's wall time minus the harness's own (`wall_seconds`, measured
            inside the worker), through a Ray GPU worker and through the local evaluator, for the same candidates
            (tests/bench/candidates/fast.cu on vector_add, mm_honest_tiled.cu on matrix_mul), each evaluated
            `--repeats` times after one warm-up (compiled objects and data cached in both cases).
  suite     `bench run`'s work (baselines at paper sizes) over the chosen variants: its wall time locally (the
            pipeline: one GPU, compiles ahead) and through Ray on the same single GPU (compile workers ahead,
            objects reused). Default: the variants of 6 tasks; --all: every variant (about 5 minutes each way).

Without --ray, a Ray cluster is started on this machine with its real GPUs (gpu/ray/local.py).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from contextlib import nullcontext
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench_tasks import all_tasks  # noqa: E402
from bench_tasks.harness.pipeline import Job, run_pipeline  # noqa: E402
from bench_tasks.provenance import provenance  # noqa: E402
from gpu.local import LocalEvaluator  # noqa: E402
from gpu.protocol import EvaluateRequest  # noqa: E402
from settings import get_harness_settings  # noqa: E402

CANDIDATES = ROOT / "tests" / "bench" / "candidates"
PAIRS = [("vector_add", "fast.cu"), ("matrix_mul", "mm_honest_tiled.cu")]
SUITE_TASKS = ["vector_add", "matrix_mul", "reverse_array", "softmax", "spmv_csr", "stencil_2d"]


def _overhead(evaluator, repeats: int) -> dict:
    out = {}
    for task, filename in PAIRS:
        source = (CANDIDATES / filename).read_text()
        evaluator.evaluate(EvaluateRequest(task=task, precision="fp32", source=source))  # warm-up: compile, data, worker start
        added, walls = [], []
        for _ in range(repeats):
            t0 = time.perf_counter()
            result = evaluator.evaluate(EvaluateRequest(task=task, precision="fp32", source=source))
            wall = time.perf_counter() - t0
            walls.append(wall)
            added.append(wall - result.wall_seconds)
        out[f"{task}/fp32"] = {
            "verdict": result.verdict.value,
            "score": result.score,
            "gpu": result.gpu.name if result.gpu else "",
            "wall_s_median": round(statistics.median(walls), 4),
            "added_s_median": round(statistics.median(added), 4),
            "added_s_max": round(max(added), 4),
        }
    return out


def _suite_jobs(everything: bool) -> list[Job]:
    return [Job(t.name, p) for t in all_tasks() if everything or t.name in SUITE_TASKS for p in t.prototypes]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--output", type=Path, required=True)
    parser.add_argument("--ray", help="an existing cluster (default: one started here on this machine's GPUs)")
    parser.add_argument("--all", action="store_true", help="the suite over every variant")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--only", action="append", choices=["overhead", "suite"])
    args = parser.parse_args()
    steps = args.only or ["overhead", "suite"]

    import ray

    from gpu.ray import RaySettings
    from gpu.ray.evaluator import RayEvaluator
    from gpu.ray.local import local_cluster
    from gpu.ray.suite import run_suite

    base = get_harness_settings()

    def fresh(name: str) -> Path:  # every measurement starts from an empty compile and data cache of its own
        return Path(tempfile.mkdtemp(prefix=f"cm-rayfig-{name}-"))

    doc: dict = {"provenance": provenance(), "figures": {}}
    with nullcontext(args.ray) if args.ray else local_cluster(None) as address:

        def cluster_with(cache: Path) -> RayEvaluator:
            return RayEvaluator(RaySettings(address=address, compile_workers=2, cache_dir=str(cache)), harness=base)

        try:
            if "overhead" in steps:
                cluster = cluster_with(fresh("overhead-ray"))
                try:
                    doc["cluster"] = cluster.status()
                    on_ray = _overhead(cluster.for_job("figures"), args.repeats)
                finally:
                    cluster.close()
                local = _overhead(LocalEvaluator(base.model_copy(update={"cache_dir": fresh("overhead-local")})), args.repeats)
                doc["figures"]["overhead"] = {
                    "ray": on_ray,
                    "local": local,
                    "repeats": args.repeats,
                    "note": "added_s = caller's wall time - the harness's own wall_seconds",
                }
                _write(args.output, doc)  # a step cut by a time limit leaves the ones before it
            if "suite" in steps:
                jobs = _suite_jobs(args.all)
                t0 = time.perf_counter()
                local_results = run_pipeline(jobs, "paper", base.model_copy(update={"cache_dir": fresh("suite-local")}))
                local_s = time.perf_counter() - t0
                print(f"suite locally: {len(jobs)} variants in {local_s:.1f} s", flush=True)
                cluster = cluster_with(fresh("suite-ray"))
                try:
                    doc["cluster"] = cluster.status()
                    t0 = time.perf_counter()
                    ray_results = run_suite(cluster, jobs, "paper")
                    ray_s = time.perf_counter() - t0
                finally:
                    cluster.close()
                doc["figures"]["suite"] = {
                    "variants": len(jobs),
                    "sizes": "paper",
                    "local_s": round(local_s, 1),
                    "ray_one_gpu_s": round(ray_s, 1),
                    "ratio": round(ray_s / local_s, 3) if local_s else None,
                    "verdicts_local": sorted(f"{r.task}/{r.precision}:{r.verdict.value}" for r in local_results),
                    "verdicts_ray": sorted(f"{r.task}/{r.precision}:{r.verdict.value}" for r in ray_results),
                    "gpu_workers": len(doc["cluster"]["gpus"]),
                    "note": "both from empty caches; the Ray time includes starting its workers",
                }
        finally:
            ray.shutdown()
    _write(args.output, doc)
    print(json.dumps(doc["figures"], indent=1))


def _write(path: Path, doc: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=1))


if __name__ == "__main__":
    main()
