import pytest

from profiling import metrics as m
from profiling.classify import Bottleneck, Thresholds, classify
from profiling.errors import ClassificationError
from profiling.parse import parse_report
from profiling.report import Metric, ProfileReport

from .helpers import fixture_text


def sol(sm, dram, mem):
    return {m.SM_THROUGHPUT: sm, m.DRAM_THROUGHPUT: dram, m.MEMORY_THROUGHPUT_PCT: mem}


def test_saxpy_from_the_notes_published_says_compute_sol_says_bandwidth():
    s = sol(34.85, 70.72, 70.72)
    assert classify(s, "published").bottleneck == Bottleneck.compute
    assert classify(s, "sol").bottleneck == Bottleneck.memory_bandwidth


@pytest.mark.parametrize(
    "fixture, published, sol_rule",
    [
        ("synthetic_saxpy_raw.csv", Bottleneck.compute, Bottleneck.memory_bandwidth),
        ("synthetic_saxpy_details.csv", Bottleneck.compute, Bottleneck.memory_bandwidth),
        ("synthetic_fma_raw.csv", Bottleneck.compute, Bottleneck.compute),
        ("synthetic_chase_raw.csv", Bottleneck.memory_latency, Bottleneck.memory_latency),
        ("synthetic_two_kernels_raw.csv", Bottleneck.compute, Bottleneck.compute),
    ],
)
def test_fixtures_under_both_rules(fixture, published, sol_rule):
    report = ProfileReport.from_kernels(parse_report(fixture_text(fixture)))
    assert classify(report, "published").bottleneck == published
    assert classify(report, "sol").bottleneck == sol_rule
    assert report.bottleneck == sol_rule  # sol is the default


@pytest.mark.parametrize(
    "sm, dram, mem, published, sol_rule",
    [
        (92.4, 0.5, 3.1, Bottleneck.compute, Bottleneck.compute),  # FMA chain
        (0.8, 1.2, 2.3, Bottleneck.memory_latency, Bottleneck.memory_latency),  # pointer chase
        (20.0, 85.0, 86.0, Bottleneck.memory_bandwidth, Bottleneck.memory_bandwidth),  # copy
        (25.0, 40.0, 45.0, Bottleneck.memory_bandwidth, Bottleneck.memory_latency),  # half-hearted streaming
        (70.0, 70.0, 70.0, Bottleneck.compute, Bottleneck.memory_bandwidth),  # tie: memory wins
        (30.0, 30.0, 30.0, Bottleneck.memory_latency, Bottleneck.memory_latency),  # boundary: not above
        (65.0, 62.0, 20.0, Bottleneck.compute, Bottleneck.compute),
    ],
)
def test_rules_on_constructed_throughputs(sm, dram, mem, published, sol_rule):
    assert classify(sol(sm, dram, mem), "published").bottleneck == published
    assert classify(sol(sm, dram, mem), "sol").bottleneck == sol_rule


def test_thresholds_are_configurable():
    s = sol(25.0, 40.0, 45.0)
    assert classify(s, "sol", Thresholds(sol_latency_pct=40.0)).bottleneck == Bottleneck.memory_bandwidth
    assert classify(s, "published", Thresholds(published_pct=50.0)).bottleneck == Bottleneck.memory_latency
    assert classify(sol(34.85, 70.72, 70.72), "published", Thresholds(published_pct=35.0)).bottleneck == Bottleneck.memory_bandwidth


def test_reason_names_the_numbers():
    c = classify(sol(34.85, 70.72, 70.72), "sol")
    assert "70.7" in c.reason and "34.9" in c.reason and c.rule == "sol"


def test_accepts_metric_objects_and_reports():
    metrics = {k: Metric(name=k, value=v, unit="%") for k, v in sol(1, 2, 3).items()}
    assert classify(metrics).bottleneck == Bottleneck.memory_latency


def test_missing_metrics_and_unknown_rule():
    with pytest.raises(ClassificationError, match="SpeedOfLight"):
        classify({m.SM_THROUGHPUT: 50.0})
    with pytest.raises(ClassificationError, match="unknown rule"):
        classify(sol(1, 2, 3), "magic")
    no_data = {m.SM_THROUGHPUT: Metric(name=m.SM_THROUGHPUT, value=None), m.DRAM_THROUGHPUT: 1.0, m.MEMORY_THROUGHPUT_PCT: 1.0}
    with pytest.raises(ClassificationError):
        classify(no_data)


def test_report_without_sol_metrics_keeps_the_reason():
    from profiling.report import KernelProfile

    report = ProfileReport.from_kernels([KernelProfile(name="k", metrics={})])
    assert report.classification is None and "SpeedOfLight" in report.classify_error
