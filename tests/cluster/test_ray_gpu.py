"""On a GPU machine (`scripts/ray_device.sh`): one real GPU worker on Ray evaluates real candidates and gives the
same verdicts, and the same speedups within the harness's own spread, as the local evaluator on the same GPU."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench_tasks.harness import Verdict
from gpu.local import LocalEvaluator
from gpu.protocol import EvaluateRequest

pytestmark = [pytest.mark.gpu, pytest.mark.timeout(1200)]

CANDIDATES = Path(__file__).resolve().parents[1] / "bench" / "candidates"
CASES = [
    ("fast.cu", "vector_add", Verdict.ok),
    ("mm_honest_tiled.cu", "matrix_mul", Verdict.ok),
    ("half.cu", "vector_add", Verdict.wrong_answer),
    ("syntax_error.cu", "vector_add", Verdict.compile_error),
    ("bad_pointer.cu", "vector_add", Verdict.runtime_error),
    ("write_past.cu", "vector_add", Verdict.runtime_error),
]


def _close(ray_row, local_row) -> bool:
    """Within the spread both measurements report (3 IQRs of each), or 10% of the speedup, whichever is larger."""
    spread = 3 * ((ray_row.speedup_iqr or 0.0) + (local_row.speedup_iqr or 0.0))
    return abs(ray_row.speedup - local_row.speedup) <= max(spread, 0.10 * local_row.speedup)


@pytest.fixture(scope="module")
def gpu_cluster(ray_address, harness_settings):
    from gpu.ray import RaySettings
    from gpu.ray.evaluator import RayEvaluator

    evaluator = RayEvaluator(RaySettings(address=ray_address, compile_workers=1), harness=harness_settings)
    yield evaluator
    evaluator.close()


@pytest.mark.parametrize(("filename", "task", "expected"), CASES, ids=[c[0] for c in CASES])
def test_a_real_gpu_worker_on_ray_gives_the_local_verdict_and_speedup(gpu_cluster, harness_settings, filename, task, expected):
    source = (CANDIDATES / filename).read_text()
    job = gpu_cluster.for_job(f"gpu-{filename}")
    on_ray = job.evaluate(EvaluateRequest(task=task, precision="fp32", source=source))
    local = LocalEvaluator(harness_settings).evaluate(EvaluateRequest(task=task, precision="fp32", source=source))
    assert on_ray.verdict == local.verdict == expected, (on_ray.message, local.message)
    if expected != Verdict.compile_error:  # a compile error is found on a CPU compile worker: no GPU ran it
        assert on_ray.gpu is not None and local.gpu is not None
        assert on_ray.gpu.name == local.gpu.name and on_ray.gpu.host  # the same model, recorded with its host
    if expected == Verdict.ok:
        assert [r.params for r in on_ray.rows] == [r.params for r in local.rows]
        far = [(r.params, r.speedup, lo.speedup) for r, lo in zip(on_ray.rows, local.rows, strict=True) if not _close(r, lo)]
        assert not far, f"speedups outside the harness's spread (params, Ray, local): {far}"
