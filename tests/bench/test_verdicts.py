"""Verdict and score rules on result documents (no GPU): roofline rejection, P, first failing check."""

import numpy as np

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


def test_late_work_past_the_end_event_is_added_to_the_candidate_time():
    from bench_tasks.harness.evaluate import late_work

    settings = HarnessSettings()
    baseline = [(100.0, 110.0, 8.0 + (i % 3)) for i in range(20)]  # tail: the synchronise cost, 8-10 us
    honest = [(50.0, 60.0, 8.5 + (i % 2)) for i in range(20)]
    assert late_work(honest, baseline, settings) is None
    hiding = [(5.0, 2000.0, 2009.0) for _ in range(20)]  # returns at once, ~2 ms left running
    late = late_work(hiding, baseline, settings)
    assert late is not None and np.allclose(late, 2000.0)


def test_a_sampled_check_still_fails_an_unwritten_element_outside_the_sample(tmp_path):
    # At large sizes only a sample is compared to the reference; every element must still be written.
    from bench_tasks.harness.evaluate import _Case, _row

    n = 64
    a, b = np.arange(n, dtype=np.float32), np.ones(n, dtype=np.float32)
    sample = np.array([0, 5, n - 1])
    case = _Case(0, {"N": n}, [(1, "check", tmp_path / "c0")], sample={"C": sample})
    refs = {(0, 0): {"C": (a + b).astype(np.float64)[sample]}}
    (tmp_path / "out").mkdir()
    out = a + b
    out.tofile(tmp_path / "out" / "c0_d0_candidate_first_C.bin")
    row = _row(VARIANT, case, [(0, 0, "candidate", "first")], {}, refs, tmp_path, HarnessSettings())
    assert row.passed and row.checks[0].checked_elements == 3
    out[10] = np.nan  # not in the sample: poison left in place
    out.tofile(tmp_path / "out" / "c0_d0_candidate_first_C.bin")
    row = _row(VARIANT, case, [(0, 0, "candidate", "first")], {}, refs, tmp_path, HarnessSettings())
    assert not row.passed and "1 elements are NaN" in row.checks[0].message


def test_datasets_written_in_threads_are_the_seeded_draws(tmp_path):
    from bench_tasks import data
    from bench_tasks.harness.evaluate import _Case, _write_datasets

    variant = load_task("stencil_2d").variant("bf16")
    cases = [_Case(i, p, [(s, "check", tmp_path / f"c{i}" / f"s{s}") for s in (1, 2, 3)])
             for i, p in enumerate([{"nx": 64, "ny": 32}, {"nx": 17, "ny": 33}])]
    _write_datasets(variant, cases, HarnessSettings(data_workers=4))
    for case in cases:
        drawn = [np.fromfile(directory / "u_old.bin", dtype=np.uint16) for _, _, directory in case.datasets]
        for (seed, _, _), got in zip(case.datasets, drawn):
            assert np.array_equal(got, data.generate(variant, case.params, seed)["u_old"])
        assert not np.array_equal(drawn[0], drawn[1])  # each seed its own data


def test_a_negative_data_worker_count_is_refused_by_the_settings():
    import pydantic
    import pytest

    with pytest.raises(pydantic.ValidationError, match="data_workers"):
        HarnessSettings(data_workers=-1)
