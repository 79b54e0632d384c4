"""End to end with the real ncu on a GPU; skipped where there is none (pytest -m gpu on the H200)."""

import shutil

import pytest

from bench_tasks.harness import gpu_status
from profiling import metrics as m
from profiling.classify import Bottleneck
from profiling.filter import render
from settings import get_profiling_settings


def _gpu() -> tuple[bool, str]:
    if shutil.which("nvidia-smi") is None:
        return False, "no nvidia-smi"
    return gpu_status()


HAVE_GPU, WHY = _gpu()
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not HAVE_GPU, reason=f"no GPU: {WHY}")]


@pytest.fixture
def settings():
    s = get_profiling_settings()
    if shutil.which(s.ncu) is None:
        pytest.skip(f"ncu not found as {s.ncu!r} (set CUDAMASTER_PROFILING__NCU)")
    return s


def test_vector_add_baseline_profile(settings):
    from profiling.ncu import profile_kernel

    report = profile_kernel("vector_add", "fp32", settings=settings)
    assert len(report.kernels) >= 1 and report.kernels[0].grid == (1, 1, 1)
    assert report.summary[m.SM_THROUGHPUT].value is not None and report.duration_ns > 0
    # One block of 1024 threads on a 132-SM GPU: neither side is busy.
    assert report.bottleneck == Bottleneck.memory_latency, report.classification
    assert "memory latency bound" in render(report)


def test_labelled_saxpy_is_bandwidth_bound(settings, tmp_path):
    from profiling.labelled import build
    from profiling.ncu import profile_command

    binary = build(tmp_path)
    report = profile_command([str(binary), "saxpy_fp32"], name="saxpy_fp32", settings=settings)
    assert len(report.kernels) == 1 and report.kernels[0].name.startswith("saxpy_fp32")
    assert report.bottleneck == Bottleneck.memory_bandwidth, report.classification
