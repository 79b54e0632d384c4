"""Review flags on evidence (issue 31 item 17), on synthetic results: a large speedup over a naive baseline is
not flagged by default; late work, a wall-clock gap, a time near the roofline floor, widely spread timed calls,
timed calls the harness could not trust (inputs not redrawn, none checked, a checked one wrong), speed beyond the
vendor library's where it is near the hardware, and a speedup that grows faster than the work between sizes are."""

from __future__ import annotations

import random

import pytest

from app.reviews import ReviewRule
from app.vendor_reference import VendorReference, VendorTime, shipped
from settings import HarnessSettings, ServiceSettings

SIZES = (1024, 4096, 16384, 65536, 262144)


def _row(n: int, speedup: float, pct: float = 20.0, flags: list[str] | None = None, iqr: float = 0.2) -> dict:
    return {
        "params": {"N": n},
        "complexity": n,
        "speedup": speedup,
        "candidate_roofline_pct": pct,
        "flags": flags or [],
        "candidate": {"median_us": 10.0, "iqr_us": iqr},
        "checks": [{"impl": "candidate", "stage": "timed_call", "call": c, "passed": True} for c in (3, 4)],
    }


def _honest(rng: random.Random) -> dict:
    """A published kernel over a one-block baseline: 10-100x, growing with size no faster than the work."""
    top = rng.uniform(10.0, 100.0)
    return {"rows": [_row(n, top * (0.3 + 0.7 * i / 4) * rng.uniform(0.95, 1.05), pct=rng.uniform(5, 80)) for i, n in enumerate(SIZES)]}


def test_speedup_threshold_is_off_by_default():
    assert HarnessSettings().review_speedup is None and "review_speedup" not in ServiceSettings.model_fields  # one knob
    assert ReviewRule.of(ServiceSettings()).reasons({"rows": [_row(1024, 80.0)]}, "ok") == []
    assert ReviewRule(speedup=10.0).reasons({"rows": [_row(1024, 80.0)]}, "ok")  # opt-in still flags


def test_the_review_queue_reads_the_harnesss_one_speedup_knob(monkeypatch):
    monkeypatch.setenv("CUDAMASTER_HARNESS__REVIEW_SPEEDUP", "12.5")
    assert ReviewRule.of(ServiceSettings()).speedup == 12.5


def test_seed_like_honest_results_are_rarely_flagged():
    rng = random.Random(31)
    rule = ReviewRule.of(ServiceSettings())
    flagged = sum(bool(rule.reasons(_honest(rng), "ok")) for _ in range(200))
    assert flagged / 200 <= 0.05


def test_evidence_of_a_measurement_problem_is_flagged():
    rule = ReviewRule()
    cases = {
        "late work": [_row(1024, 3.0, flags=["late_work"])],
        "wall-clock": [_row(1024, 3.0, flags=["wall_gap"])],
        "roofline floor": [_row(1024, 3.0, pct=95.0)],
        "spread widely": [_row(1024, 3.0, iqr=8.0)],
        "jumps": [_row(1024, 2.0), _row(4096, 40.0)],  # 20x more speedup for 4x the work
    }
    for words, rows in cases.items():
        reasons = rule.reasons({"rows": rows}, "ok")
        assert len(reasons) == 1 and words in reasons[0], (words, reasons)


def test_speedup_growing_with_the_work_is_not_a_jump():
    assert ReviewRule().reasons({"rows": [_row(1024, 2.0), _row(4096, 7.9), _row(16384, 30.0)]}, "ok") == []


def test_timed_calls_the_harness_could_not_trust_are_flagged():
    rule = ReviewRule()
    replayable = _row(1024, 3.0, flags=["inputs_not_refreshed"])
    unchecked = {**_row(1024, 3.0), "checks": [{"impl": "candidate", "stage": "first", "passed": True}]}
    disagreeing = {**_row(1024, 3.0), "checks": [{"impl": "candidate", "stage": "timed_call", "call": 7, "passed": False}]}
    cases = {"inputs were not redrawn": replayable, "0 checked timed pairs": unchecked, "timed call 7 checked wrong": disagreeing}
    for words, row in cases.items():
        reasons = rule.reasons({"rows": [row]}, "ok")
        assert len(reasons) == 1 and reasons[0].startswith("size 1 (N=1024): ") and words in reasons[0], (words, reasons)
    assert rule.reasons({"rows": [_row(1024, 3.0)]}, "ok") == []  # timed pairs checked and right
    untimed = {"params": {"N": 1024}, "passed": True, "baseline": {"median_us": 5.0, "iqr_us": 0.1}, "checks": []}
    assert rule.reasons({"rows": [untimed]}, "ok") == []  # nothing timed: no timed pair to check


GEMM = {"M": 4096, "N": 4096, "K": 4096}
H200, H100 = "NVIDIA H200", "NVIDIA H100 80GB HBM3"


def _gemm(median_us: float, pct: float, gpu: str = H200, implementation: str = "candidate") -> dict:
    row = {**_row(4096, 9.0, pct=pct), "params": GEMM, "complexity": 4096**3}
    row["candidate"] = {"median_us": median_us, "iqr_us": 0.01 * median_us}
    return {"task": "matrix_mul", "precision": "fp32", "implementation": implementation, "gpu": {"name": gpu}, "rows": [row]}


def _cublas(pct: float = 74.0) -> VendorReference:
    return VendorReference({("matrix_mul", "fp32", "K=4096,M=4096,N=4096"): VendorTime(2774.0, pct, H200, "cublas")})


def test_faster_than_cublas_on_a_gemm_is_flagged_by_time_on_the_same_gpu_model():
    rule = ReviewRule(vendor=_cublas())
    (why,) = rule.reasons(_gemm(2000.0, 60.0), "ok")  # 1.39x faster than cuBLAS (its pct is not what is compared)
    assert "1.39x faster than the vendor library (cublas)" in why and "2000.00 µs against 2774.00 µs on the same GPU model" in why
    assert rule.reasons(_gemm(2500.0, 82.0), "ok") == []  # 11 % faster: within the margin
    assert ReviewRule(vendor=_cublas(), vendor_margin=0.05).reasons(_gemm(2500.0, 82.0), "ok")  # a tighter margin flags it
    assert ReviewRule(vendor=_cublas(), vendor_margin=None).reasons(_gemm(2000.0, 60.0), "ok") == []  # off
    assert rule.reasons(_gemm(2000.0, 60.0, implementation="vendor"), "ok") == []  # the reference itself


def test_on_another_gpu_model_the_vendor_comparison_is_by_roofline_percent():
    rule = ReviewRule(vendor=_cublas(pct=60.0))
    (why,) = rule.reasons(_gemm(2600.0, 84.0, gpu=H100), "ok")  # 84 % of the floor against cuBLAS's 60 % on the H200
    assert "1.40x faster" in why and "84.0% of the roofline floor against its 60.0% on NVIDIA H200 (this GPU: NVIDIA H100" in why
    assert rule.reasons(_gemm(1000.0, 70.0, gpu=H100), "ok") == []  # a faster time, but not that much closer to the floor


def test_a_vendor_reference_far_from_the_roofline_is_no_evidence():
    weak = ReviewRule(vendor=_cublas(pct=12.0))  # a launch-bound or poorly fitting library: beating it is ordinary
    assert weak.reasons(_gemm(500.0, 60.0), "ok") == []
    assert ReviewRule(vendor=_cublas(pct=12.0), vendor_min_pct=10.0).reasons(_gemm(500.0, 60.0), "ok")
    other_size = _gemm(500.0, 60.0)
    other_size["rows"][0]["params"] = {"M": 64, "N": 4096, "K": 4096}
    assert ReviewRule(vendor=_cublas()).reasons(other_size, "ok") == []  # no reference at that size


def test_the_shipped_vendor_reference_and_the_settings_drive_the_default_rule():
    ref = shipped().at("matrix_mul", "fp32", GEMM)
    assert ref is not None and ref.gpu == H200 and "cublas" in ref.libraries and ref.roofline_pct > 40.0
    assert shipped().at("RELU", "fp32", {"N": 1024}) is None  # no vendor reference for the activations
    rule = ReviewRule.of(ServiceSettings())
    assert rule.vendor_margin == 0.25 and rule.vendor_min_pct == 40.0
    twice = _gemm(ref.median_us / 2, ref.roofline_pct)  # twice cuBLAS's speed on the H200 (its time is compared there)
    assert len(rule.reasons(twice, "ok")) == 1
    assert rule.reasons(_gemm(ref.median_us * 1.1, ref.roofline_pct / 1.1), "ok") == []  # slower than cuBLAS
    off = ReviewRule.of(ServiceSettings(review_vendor_margin=None, review_vendor_min_pct=10.0))
    assert off.vendor_margin is None and off.vendor_min_pct == 10.0 and off.reasons(twice, "ok") == []


@pytest.mark.parametrize("bad", [{"review_vendor_margin": -0.1}, {"review_vendor_min_pct": -1.0}])
def test_vendor_settings_refuse_negative_values(bad):
    with pytest.raises(ValueError):
        ServiceSettings(**bad)


def _shaped(n: int, c: int, speedup: float) -> dict:
    return {**_row(n * c, speedup), "params": {"N": n, "C": c}}


def test_jumps_are_judged_along_one_dimension_not_across_shapes():
    """softmax's paper sizes as cuDNN measured them on the H200: 27.7x at 128 x 256, 162x at 16 x 4096 (twice the
    work): the naive baseline is slow on few long rows, so no cost model relates the two shapes."""
    assert ReviewRule().reasons({"rows": [_shaped(128, 256, 27.7), _shaped(16, 4096, 162.1)]}, "ok") == []
    assert ReviewRule().reasons({"rows": [_shaped(128, 256, 27.7), _shaped(128, 512, 30.0), _shaped(64, 512, 20.0)]}, "ok") == []
    (jump,) = ReviewRule().reasons({"rows": [_shaped(16, 256, 2.0), _shaped(16, 4096, 162.1)]}, "ok")  # one row length apart
    assert jump.startswith("sizes 1 -> 2: speedup jumps 2.00x -> 162.10x")
