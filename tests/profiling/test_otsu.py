import json

import numpy as np
import pytest

from profiling import metrics as m
from profiling.errors import ReportFormatError
from profiling.otsu import fit_thresholds, load_corpus, otsu_threshold
from profiling.report import KernelProfile, Metric, ProfileReport


def brute_force(values):
    v = np.sort(np.asarray(values, dtype=float))
    best, best_t = -1.0, None
    for t in (v[1:] + v[:-1]) / 2:
        a, b = v[v <= t], v[v > t]
        if len(a) == 0 or len(b) == 0:
            continue
        score = len(a) * len(b) / len(v) ** 2 * (a.mean() - b.mean()) ** 2
        if score > best:
            best, best_t = score, t
    return best_t


def test_bimodal_threshold_falls_in_the_gap():
    rng = np.random.default_rng(0)
    values = np.concatenate([rng.normal(10, 3, 200), rng.normal(75, 5, 120)])
    t = otsu_threshold(values)
    assert 25 < t < 60
    assert (values <= t).sum() == 200


@pytest.mark.parametrize("seed", range(5))
def test_matches_brute_force(seed):
    values = np.random.default_rng(seed).gamma(2.0, 10.0, 57)
    assert otsu_threshold(values) == pytest.approx(brute_force(values))


def test_small_and_degenerate_inputs():
    assert otsu_threshold([1.0, 3.0]) == 2.0
    assert otsu_threshold([0, 0, 0, 10, 10]) == 5.0
    with pytest.raises(ValueError):
        otsu_threshold([4.0, 4.0, 4.0])
    with pytest.raises(ValueError):
        otsu_threshold([np.nan, 1.0])


def report(sm, dram, mem, task="t"):
    metrics = {
        n: Metric(name=n, value=v, unit="%") for n, v in ((m.SM_THROUGHPUT, sm), (m.DRAM_THROUGHPUT, dram), (m.MEMORY_THROUGHPUT_PCT, mem))
    }
    return ProfileReport.from_kernels([KernelProfile(name="k", metrics=metrics)], task=task, precision="fp32")


def test_fit_thresholds_over_a_corpus_records_its_data(tmp_path):
    reports = [
        report(2, 1, 3, "lat1"),
        report(5, 4, 8, "lat2"),
        report(90, 2, 5, "fma"),
        report(30, 80, 82, "copy"),
        report(35, 71, 71, "saxpy"),
    ]
    path = tmp_path / "run.json"
    path.write_text(json.dumps([r.model_dump(mode="json") for r in reports]))
    fitted = fit_thresholds(load_corpus(path), source=str(path))
    busiest = [3, 8, 90, 82, 71]
    assert fitted["thresholds"]["sol_latency_pct"] == pytest.approx(otsu_threshold(busiest))
    assert 8 < fitted["thresholds"]["sol_latency_pct"] < 71
    assert fitted["count"] == 5 and next(d["report"] for d in fitted["data"]) == "lat1/fp32"
    assert fitted["source"] == str(path)


def test_fit_skips_profiles_without_throughputs_and_needs_two():
    empty = ProfileReport.from_kernels([KernelProfile(name="k")])
    fitted = fit_thresholds([report(1, 1, 1), report(90, 1, 1), empty])
    assert fitted["count"] == 2 and len(fitted["skipped"]) == 1
    with pytest.raises(ValueError, match="at least two"):
        fit_thresholds([report(1, 1, 1), empty])


def test_load_corpus_errors(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    with pytest.raises(ReportFormatError, match="JSON list"):
        load_corpus(bad)
    bad.write_text("not json")
    with pytest.raises(ReportFormatError, match="not JSON"):
        load_corpus(bad)
    bad.write_text('[{"kernels": 3}]')
    with pytest.raises(ReportFormatError, match="not a profile report"):
        load_corpus(bad)
    with pytest.raises(ReportFormatError, match="cannot read"):
        load_corpus(tmp_path / "missing.json")
