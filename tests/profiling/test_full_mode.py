"""The `full` profile mode on real H200 reports (tests/fixtures/ncu/labelled: ncu raw pages with all
~720 columns) and the explicit token budget."""

from __future__ import annotations

import pytest

from profiling import metrics as m
from profiling.budget import MIN_BUDGET, cut_line, fit_to_budget
from profiling.details import BREAKDOWN_TITLE, DETAILS_METRICS, breakdown
from profiling.filter import render
from profiling.parse import parse_report
from profiling.report import ProfileReport
from profiling.tokens import count_tokens

from .helpers import FIXTURES, fixture_text

LABELLED = sorted(p.name for p in (FIXTURES / "labelled").glob("*.csv"))


def load(name: str) -> ProfileReport:
    return ProfileReport.from_kernels(parse_report(fixture_text(name)))


@pytest.mark.parametrize("name", LABELLED)
def test_every_details_metric_is_in_a_real_h200_report(name):
    report = load(f"labelled/{name}")
    assert sorted(DETAILS_METRICS - set(report.summary)) == []


def test_full_has_the_throughputs_and_not_the_attribute_flood():
    report = load("labelled/copy_fp32.csv")
    full = render(report, "full")
    for raw in (
        m.SM_THROUGHPUT,
        m.DRAM_THROUGHPUT,
        m.MEMORY_THROUGHPUT_PCT,
        "lts__throughput.avg.pct_of_peak_sustained_elapsed",
        "l1tex__throughput.avg.pct_of_peak_sustained_active",
        m.ACHIEVED_OCCUPANCY,
        m.DURATION,
    ):
        assert f"[{raw}]" in full, raw
    assert "- Compute (SM) Throughput: 6.28 %" in full and "- DRAM Throughput: 81.41 %" in full
    assert "c2clink__" not in full and "derived__" not in full and "device__attribute" not in full
    assert full.count("NVIDIA H200") == 1 and full.count("\nDevice: ") == 1
    # The old full mode (every raw column by name) was 14,110 tokens of which the first ~150 lines were
    # c2clink__/derived__/device__attribute_*; the throughputs now come before any breakdown line.
    lines = full.splitlines()
    assert lines.index(f"Section: {BREAKDOWN_TITLE}") > max(i for i, line in enumerate(lines) if f"[{m.DRAM_THROUGHPUT}]" in line)


def test_breakdown_is_busiest_first_and_leaves_out_the_sections():
    rows = breakdown(load("labelled/copy_fp32.csv"))
    values = [v for _, v in rows]
    assert rows and values == sorted(values, reverse=True)
    names = {n for n, _ in rows}
    assert not names & DETAILS_METRICS and not any(n.startswith("device__") for n in names)


def test_budget_cuts_whole_lines_and_says_so():
    full = render(load("labelled/copy_fp32.csv"), "full")
    whole = count_tokens(full).tokens
    sent = fit_to_budget(full, 800)
    assert whole > 800 >= sent.tokens == count_tokens(sent.text).tokens
    total = len(full.splitlines())
    assert sent.lines_cut > 0 and sent.text.endswith(cut_line(800, sent.lines_cut, total))
    kept = sent.text.splitlines()[:-1]
    assert kept == full.splitlines()[: total - sent.lines_cut]
    # One more line would not have fitted.
    more = "\n".join([*full.splitlines()[: len(kept) + 1], cut_line(800, sent.lines_cut - 1, total)])
    assert count_tokens(more).tokens > 800


def test_budget_gives_whole_text_when_it_fits_or_when_none():
    text = render(load("labelled/copy_fp32.csv"), "filtered")
    n = count_tokens(text).tokens
    for budget in (None, n):
        sent = fit_to_budget(text, budget)
        assert (sent.text, sent.tokens, sent.lines_cut, sent.budget) == (text, n, 0, budget)
    with pytest.raises(ValueError, match=f"at least {MIN_BUDGET}"):
        fit_to_budget(text, MIN_BUDGET - 1)
