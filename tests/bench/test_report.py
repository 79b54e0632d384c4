"""`cudamaster bench report`: every number of the report equals one computed by hand from a small run file."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bench_tasks.cli import app
from bench_tasks.harness.result import EvaluationResult, SizeRow, TimeStats, Verdict
from bench_tasks.report import ReportError, load_run, summarize, to_html, to_markdown

runner = CliRunner()


def _stats(us: float) -> TimeStats:
    return TimeStats(median_us=us, iqr_us=0.1, min_us=us, samples=10, wall_median_us=us + 5)


def _row(
    n: int, floor: float, baseline: float | None, other: float | None = None, speedup: float | None = None, passed: bool = True
) -> SizeRow:
    return SizeRow(
        params={"N": n},
        complexity=n,
        passed=passed,
        baseline=_stats(baseline) if baseline else None,
        candidate=_stats(other) if other else None,
        speedup=speedup,
        roofline_floor_us=floor,
    )


def _result(
    task: str, precision: str, implementation: str, rows: list[SizeRow], score: float | None, verdict: Verdict = Verdict.ok
) -> dict:
    r = EvaluationResult(
        task=task,
        precision=precision,
        verdict=verdict,
        rows=rows,
        score=score,
        size_set="paper",
        baseline_only=implementation == "baseline",
        implementation=implementation,
        vendor_libraries=["cublas"] if implementation == "vendor" else [],
    )
    return r.model_dump(mode="json")


def _run_one() -> dict:
    return {
        "provenance": {"git_commit": "abc1234", "date": "2026-12-02", "host": "h200"},
        "size_set": "paper",
        "results": [
            _result("vector_add", "fp32", "candidate", [_row(1024, 1.0, 10.0, 4.0, 2.5), _row(4096, 2.0, 20.0, 5.0, 4.0)], 3.0),
            _result("vector_add", "fp32", "vendor", [_row(1024, 1.0, 11.0, 2.0, 5.5), _row(4096, 2.0, 21.0, 4.0, 5.25)], 5.0),
            _result("matrix_mul", "fp32", "candidate", [_row(64, 3.0, 30.0, 40.0, 0.75, passed=False)], None, Verdict.wrong_answer),
            _result("matrix_mul", "fp32", "vendor", [_row(64, 3.0, 30.0, 20.0, 1.5)], 1.5),
            _result("softmax", "fp32", "baseline", [_row(256, 0.5, 8.0)], None),
            _result("softmax", "fp32", "vendor", [_row(256, 0.5, 9.0, 1.0, 9.0)], 9.0),
            _result("softmax", "fp32", "candidate", [_row(256, 0.5, 8.5, 8.5, 1.0)], 1.0),
            _result("RELU", "bf16", "baseline", [_row(1024, 0.2, 5.0)], None),
        ],
    }


def _run_two() -> dict:
    run = _run_one()
    run["results"][0] = _result("vector_add", "fp32", "candidate", [_row(1024, 1.0, 10.0, 2.0, 5.0), _row(4096, 2.0, 20.0, 2.5, 8.0)], 6.0)
    return run


@pytest.fixture()
def runs(tmp_path: Path) -> tuple[Path, Path]:
    one, two = tmp_path / "run1.json", tmp_path / "run2.json"
    one.write_text(json.dumps(_run_one()))
    two.write_text(json.dumps(_run_two()))
    return one, two


def test_per_size_numbers_equal_hand_computed_ones(runs):
    s = summarize(load_run(runs[0]))
    va = next(v for v in s.variants if v.key == "vector_add/fp32")
    assert va.scores == {"candidate": 3.0, "vendor": 5.0}
    small = va.sizes[0]
    assert small.params == {"N": 1024}
    assert small.baseline_us == 10.0  # the baseline paired with the candidate
    assert (small.vendor_us, small.candidate_us) == (2.0, 4.0)
    assert (small.vendor_speedup, small.candidate_speedup) == (5.5, 2.5)
    assert small.candidate_over_vendor == pytest.approx(0.5)  # vendor 2 us / candidate 4 us
    assert small.floor_us == 1.0
    assert small.baseline_roofline_pct == pytest.approx(10.0)
    assert small.vendor_roofline_pct == pytest.approx(50.0)
    assert small.candidate_roofline_pct == pytest.approx(25.0)
    mm = next(v for v in s.variants if v.key == "matrix_mul/fp32")
    assert mm.scores == {"candidate": None, "vendor": 1.5}  # a wrong answer has no P
    assert mm.sizes[0].passed is False
    sm = next(v for v in s.variants if v.key == "softmax/fp32")
    assert sm.sizes[0].baseline_us == 8.5  # the candidate's pairing, not the baseline-alone run's 8.0
    assert sm.verdicts == {"baseline": "ok", "vendor": "ok", "candidate": "ok"}


def test_share_table_equals_hand_counts(runs):
    s = summarize(load_run(runs[0]))
    rows = {r.category: r for r in s.shares}
    assert list(rows) == ["activation", "dense/algebra", "normalization", "overall"]
    overall = rows["overall"]
    # candidate: vector_add 3.0, matrix_mul failed (below 1), softmax 1.0
    assert overall.variants["candidate"] == 3
    assert [overall.reached["candidate"][t] for t in (1, 2, 4, 8)] == [2, 1, 0, 0]
    # vendor: 5.0, 1.5, 9.0
    assert overall.variants["vendor"] == 3
    assert [overall.reached["vendor"][t] for t in (1, 2, 4, 8)] == [3, 2, 2, 1]
    assert overall.share("vendor", 4.0) == pytest.approx(2 / 3)
    dense = rows["dense/algebra"]
    assert [dense.reached["candidate"][t] for t in (1, 2, 4, 8)] == [1, 1, 0, 0]
    assert rows["activation"].share("candidate", 1.0) is None  # RELU: baseline only, nothing measured


def test_two_runs_give_the_change(runs):
    s = summarize(load_run(runs[0]), load_run(runs[1]))
    change = next(c for c in s.changes if c.key == "vector_add/fp32" and c.implementation == "candidate")
    assert (change.score_1, change.score_2) == (3.0, 6.0)
    assert change.times == [({"N": 1024}, 4.0, 2.0), ({"N": 4096}, 5.0, 2.5)]
    md = to_markdown(s)
    assert "| vector_add/fp32 | candidate | 3.000 | 6.000 | 2.000x | paper: N=1024 | 4.00 | 2.00 | -50.0% |" in md


def test_markdown_and_html_carry_the_same_numbers(runs):
    s = summarize(load_run(runs[0]))
    md, page = to_markdown(s), to_html(s)
    for text in ("67% (2/3)", "33% (1/3)", "100% (3/3)", "0.50x", "50.0", "25.0", "FAILED", "wrong_answer"):
        assert text in md and text in page, text
    assert "| vector_add/fp32 | paper: N=1024 | 10.00 | 2.00 | 4.00 | 5.50x | 2.50x | 0.50x | 1.00 | 10.0 | 50.0 | 25.0 | passed |" in md


def test_html_is_self_contained(runs):
    page = to_html(summarize(load_run(runs[0]), load_run(runs[1])))
    assert page.startswith("<!DOCTYPE html>") and "<svg" in page and "<style>" in page
    assert not re.search(r"https?://|(src|href)\s*=|@import|<script|<link", page, re.I)


def test_cli_writes_both_formats(runs, tmp_path):
    prefix = tmp_path / "out" / "report"
    res = runner.invoke(app, ["report", str(runs[0]), str(runs[1]), "--output", str(prefix)])
    assert res.exit_code == 0, res.output
    assert "67% (2/3)" in (tmp_path / "out" / "report.md").read_text()
    assert "67% (2/3)" in (tmp_path / "out" / "report.html").read_text()
    res = runner.invoke(app, ["report", str(runs[0])])  # default: next to the run file
    assert res.exit_code == 0, res.output
    assert runs[0].with_name("run1.report.html").is_file()


def test_bad_run_files_are_clear_errors(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"something": 1}')
    with pytest.raises(ReportError, match="results"):
        load_run(bad)
    res = runner.invoke(app, ["report", str(tmp_path / "missing.json")])
    assert res.exit_code == 2 and "does not exist" in " ".join(res.output.split())


def test_old_result_documents_still_load(tmp_path):
    doc = _run_one()
    for r in doc["results"]:
        r.pop("implementation")
        r.pop("vendor_libraries")
        r["schema_version"] = "1.1"
    path = tmp_path / "old.json"
    path.write_text(json.dumps(doc))
    run = load_run(path)
    assert [r.implementation for r in run.results][:1] == ["candidate"]
    assert run.results[4].implementation == "baseline"  # baseline_only
