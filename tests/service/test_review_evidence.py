"""Review flags on evidence (issue 31 item 17), on synthetic results: a large speedup over a naive baseline is
not flagged by default; late work, a wall-clock gap, a time near the roofline floor, widely spread timed calls
and a speedup that grows faster than the work between sizes are."""

from __future__ import annotations

import random

from app.reviews import ReviewRule
from settings import ServiceSettings

SIZES = (1024, 4096, 16384, 65536, 262144)


def _row(n: int, speedup: float, pct: float = 20.0, flags: list[str] | None = None, iqr: float = 0.2) -> dict:
    return {
        "params": {"N": n},
        "complexity": n,
        "speedup": speedup,
        "candidate_roofline_pct": pct,
        "flags": flags or [],
        "candidate": {"median_us": 10.0, "iqr_us": iqr},
    }


def _honest(rng: random.Random) -> dict:
    """A published kernel over a one-block baseline: 10-100x, growing with size no faster than the work."""
    top = rng.uniform(10.0, 100.0)
    return {"rows": [_row(n, top * (0.3 + 0.7 * i / 4) * rng.uniform(0.95, 1.05), pct=rng.uniform(5, 80)) for i, n in enumerate(SIZES)]}


def test_speedup_threshold_is_off_by_default():
    assert ServiceSettings().review_speedup is None
    assert ReviewRule.of(ServiceSettings()).reasons({"rows": [_row(1024, 80.0)]}, "ok") == []
    assert ReviewRule(speedup=10.0).reasons({"rows": [_row(1024, 80.0)]}, "ok")  # opt-in still flags


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
