import pytest

from bench_tasks.harness.result import SizeRow, TimeStats
from profiling import metrics as m
from profiling.classify import Bottleneck
from profiling.filter import CLASS_METRICS, render
from profiling.parse import parse_report
from profiling.report import ProfileReport

from .helpers import fixture_text

ALL_CLASS_METRICS = {raw for names in CLASS_METRICS.values() for raw in names}


def load(name, rule="sol"):
    return ProfileReport.from_kernels(parse_report(fixture_text(name)), rule=rule)


@pytest.mark.parametrize(
    "fixture, rule, bottleneck",
    [
        ("synthetic_fma_raw.csv", "sol", Bottleneck.compute),
        ("synthetic_saxpy_raw.csv", "sol", Bottleneck.memory_bandwidth),
        ("synthetic_chase_raw.csv", "sol", Bottleneck.memory_latency),
        ("synthetic_saxpy_raw.csv", "published", Bottleneck.compute),
    ],
)
def test_filtered_shows_only_the_class_metrics(fixture, rule, bottleneck):
    report = load(fixture, rule)
    assert report.bottleneck == bottleneck
    text = render(report)
    assert text.startswith(f"Bottleneck: {bottleneck.title}")
    mine = CLASS_METRICS[bottleneck]
    for raw in mine:
        assert f"- {m.label(raw)}: " in text
    for raw in ALL_CLASS_METRICS - set(mine):
        assert f"- {m.label(raw)}: " not in text, raw
    assert "grid (" in text and "block (" in text and "registers/thread" in text and "achieved occupancy" in text
    assert "sm__" not in text and "gpu__" not in text  # labels, not raw names


def test_filtered_values_and_units():
    text = render(load("synthetic_saxpy_raw.csv"))
    assert "DRAM Throughput: 70.72 %" in text and "Memory Throughput (SOL %): 70.72 %" in text
    assert "3.400 TB/s" in text and "duration 231.04 us" in text and "16 registers/thread" in text


def test_latency_shows_no_data_for_missing_values():
    text = render(load("synthetic_chase_raw.csv"))
    assert "L2 Hit Rate: no data" in text


def test_full_shows_the_details_sections_and_none_is_empty():
    report = load("synthetic_saxpy_raw.csv")
    full = render(report, "full")
    assert "Section: GPU Speed Of Light Throughput" in full
    assert f"- DRAM Throughput: 70.72 % [{m.DRAM_THROUGHPUT}]" in full
    assert render(report, "none") == ""
    assert len(full) > len(render(report))
    with pytest.raises(ValueError, match="filter mode"):
        render(report, "some")


def test_several_kernels_are_listed():
    text = render(load("synthetic_two_kernels_raw.csv"))
    assert "bias_epilogue" in text and "2 kernels, total duration 1000.00 us" in text


def test_roofline_position_from_an_evaluation_row():
    row = SizeRow(
        params={"N": 67108864},
        complexity=67108864,
        passed=True,
        roofline_floor_us=167.8,
        baseline=TimeStats(median_us=400.0, iqr_us=1, min_us=390, samples=10, wall_median_us=410),
        candidate=TimeStats(median_us=231.0, iqr_us=1, min_us=229, samples=10, wall_median_us=240),
        baseline_roofline_pct=41.95,
        candidate_roofline_pct=72.64,
        speedup=1.73,
    )
    text = render(load("synthetic_saxpy_raw.csv"), row=row)
    assert "floor 167.80 us" in text and "candidate median 231.00 us = 72.6 % of roofline" in text
    assert "baseline median 400.00 us = 42.0 % of roofline" in text and "speedup 1.73x" in text
