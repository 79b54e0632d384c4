"""Verdict and score rules on result documents (no GPU): roofline rejection, P, first failing check."""

from bench_tasks import load_task
from bench_tasks.harness.evaluate import _verdict
from bench_tasks.harness.result import Check, EvaluationResult, SizeRow, TimeStats, Verdict
from bench_tasks.harness.settings import HarnessSettings

VARIANT = load_task("vector_add").variant("fp32")


def _stats(us: float) -> TimeStats:
    return TimeStats(median_us=us, iqr_us=0.1, min_us=us, samples=10, wall_median_us=us + 5)


def _row(n: int, base: float, cand: float, floor: float, passed: bool = True) -> SizeRow:
    checks = [Check(impl="candidate", seed=1, stage="first", passed=passed, message="" if passed else "C: 3 of 10 checked elements outside")]
    return SizeRow(params={"N": n}, complexity=n, passed=passed, checks=checks, baseline=_stats(base), candidate=_stats(cand),
                   speedup=base / cand, roofline_floor_us=floor)


def _result(*rows: SizeRow) -> EvaluationResult:
    return EvaluationResult(task="vector_add", precision="fp32", verdict=Verdict.ok, rows=list(rows))


def test_score_is_the_complexity_weighted_mean_of_speedups():
    result = _result(_row(1000, 20.0, 10.0, 0.1), _row(3000, 40.0, 10.0, 0.1))
    assert _verdict(VARIANT, result, HarnessSettings()) == (Verdict.ok, "")
    assert result.score == (1000 * 2.0 + 3000 * 4.0) / 4000


def test_a_time_under_the_roofline_floor_is_rejected():
    result = _result(_row(1000, 20.0, 10.0, 0.1), _row(1 << 26, 30000.0, 50.0, 160.0))
    verdict, message = _verdict(VARIANT, result, HarnessSettings())
    assert verdict == Verdict.rejected
    assert "below the roofline floor" in message and "67108864" in message
    assert result.score is None


def test_a_failed_check_is_wrong_answer_naming_size_seed_and_stage():
    result = _result(_row(1000, 20.0, 10.0, 0.1), _row(2000, 20.0, 10.0, 0.1, passed=False))
    verdict, message = _verdict(VARIANT, result, HarnessSettings())
    assert verdict == Verdict.wrong_answer
    assert "{'N': 2000}" in message and "seed 1" in message and "first run" in message
