"""Verdict and score rules on result documents (no GPU): roofline rejection, P, first failing check."""

import numpy as np

from bench_tasks import load_task
from bench_tasks.harness.evaluate import _verdict
from bench_tasks.harness.result import Check, EvaluationResult, SizeRow, TimeStats, Verdict
from settings import HarnessSettings

VARIANT = load_task("vector_add").variant("fp32")


def _stats(us: float) -> TimeStats:
    return TimeStats(median_us=us, iqr_us=0.1, min_us=us, samples=10, wall_median_us=us + 5)


def _row(n: int, base: float, cand: float, floor: float, passed: bool = True) -> SizeRow:
    checks = [
        Check(impl="candidate", seed=1, stage="first", passed=passed, message="" if passed else "C: 3 of 10 checked elements outside")
    ]
    return SizeRow(
        params={"N": n},
        complexity=n,
        passed=passed,
        checks=checks,
        baseline=_stats(base),
        candidate=_stats(cand),
        speedup=base / cand,
        roofline_floor_us=floor,
    )


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
    # At large sizes only a sample is compared to the reference; every element must still be written:
    # the driver counts the non-finite elements of the whole output and saves only the sample.
    from bench_tasks.harness.checks import Case, compare_outputs

    n = 64
    a, b = np.arange(n, dtype=np.float32), np.ones(n, dtype=np.float32)
    sample = np.array([0, 5, n - 1])
    case = Case(0, {"N": n}, [(1, "check", tmp_path / "c0")], sample={"C": sample})
    want = {"C": (a + b).astype(np.float64)[sample]}
    (cmp,) = compare_outputs(VARIANT, case, {"C": ((a + b)[sample], 0)}, want, dict)
    assert cmp.passed and cmp.checked == 3
    cmps = compare_outputs(VARIANT, case, {"C": ((a + b)[sample], 1)}, want, dict)  # one NaN outside the sample
    assert not cmps[-1].passed and "1 elements are NaN" in cmps[-1].message


def test_cached_datasets_are_exactly_the_seeded_draws(tmp_path):
    from bench_tasks import data
    from bench_tasks.harness.datacache import DataCache

    variant = load_task("stencil_2d").variant("bf16")
    cache = DataCache(HarnessSettings(cache_dir=tmp_path, scratch_root=tmp_path / "scratch"))
    for params in ({"nx": 64, "ny": 32}, {"nx": 17, "ny": 33}):
        dirs = [cache.dataset(variant, params, s, tmp_path / "unused") for s in (1, 2, 3)]
        assert len(set(dirs)) == 3 and all(d.is_relative_to(cache.root) and (d / "ready").exists() for d in dirs)
        drawn = [np.fromfile(d / "u_old.bin", dtype=np.uint16) for d in dirs]
        for seed, got in zip((1, 2, 3), drawn, strict=True):
            assert np.array_equal(got, data.generate(variant, params, seed)["u_old"])
        assert not np.array_equal(drawn[0], drawn[1])  # each seed its own data
        assert cache.dataset(variant, params, 1, tmp_path / "unused") == dirs[0]  # drawn once


def test_the_data_cache_is_bounded_and_drops_the_least_recently_used(tmp_path):
    import os
    import time

    from bench_tasks.harness.datacache import DataCache

    variant = load_task("vector_add").variant("fp32")
    cache = DataCache(
        HarnessSettings(cache_dir=tmp_path, scratch_root=tmp_path / "scratch", data_cache_bytes=3 * 2 * 4 * 1000)
    )  # room for 3 of 4 datasets
    dirs = [cache.dataset(variant, {"N": 1000}, s, tmp_path / "x") for s in (1, 2, 3, 4)]
    old = time.time() - 3600
    for i, d in enumerate(dirs):
        os.utime(d / "ready", (old + i, old + i))  # seed 1 least recently used
    cache.prune()
    assert [d.exists() for d in dirs] == [False, True, True, True]
    os.utime(dirs[1] / "ready")  # in use just now: kept even when over the bound
    cache.limit = 1
    cache.prune()
    assert [d.exists() for d in dirs] == [False, True, False, False]


def test_the_data_cache_bound_counts_references_and_a_full_disk_is_never_written(tmp_path):
    import os
    import time

    import numpy as np

    from bench_tasks.harness.datacache import DataCache

    variant = load_task("vector_add").variant("fp32")
    settings = HarnessSettings(cache_dir=tmp_path, scratch_root=tmp_path / "scratch", data_cache_bytes=3 * 2 * 4 * 1000)
    cache = DataCache(settings)
    dirs = [cache.dataset(variant, {"N": 1000}, s, tmp_path / "x") for s in (1, 2)]
    for seed in (1, 2):  # a float64 reference is 8 KB: the two entries are now over the 24 KB bound
        cache.store_reference(variant, {"N": 1000}, seed, {"C": np.ones(1000)})
    old = time.time() - 3600
    for i, d in enumerate(dirs):
        os.utime(d / "ready", (old + i, old + i))
    cache.prune()
    assert [d.exists() for d in dirs] == [False, True]
    assert cache.reference(variant, {"N": 1000}, 1) is None and cache.reference(variant, {"N": 1000}, 2) is not None

    fresh = DataCache(settings.model_copy(update={"cache_dir": tmp_path / "not" / "made" / "yet"}))
    assert fresh.has_room()  # a cache directory not created yet has its file system's room

    full = DataCache(settings.model_copy(update={"data_cache_min_free_bytes": 1 << 62}))  # no file system has that much free
    assert not full.has_room()
    drawn = full.dataset(variant, {"N": 1000}, 3, tmp_path / "own")
    assert drawn == tmp_path / "own" and (drawn / "ready").exists()  # drawn into the evaluation's own directory
    assert full.ready(variant, {"N": 1000}, 3) is None
    full.store_reference(variant, {"N": 1000}, 3, {"C": np.ones(1000)})
    assert full.reference(variant, {"N": 1000}, 3) is None


def test_a_negative_data_worker_count_is_refused_by_the_settings():
    import pydantic
    import pytest

    with pytest.raises(pydantic.ValidationError, match="data_workers"):
        HarnessSettings(data_workers=-1)
