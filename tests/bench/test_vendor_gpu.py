"""On a GPU: every vendor reference passes every paper size's checks for its task (the same float64
references and tolerances as any candidate: seeds 1-3 twice, a fresh seed after timing) and is timed
against the baseline. Test ids carry the libraries (`-k cudnn`, `-k cusparse`, ...) to split the run."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from bench_tasks.cli import app
from bench_tasks.harness import Verdict, evaluate
from bench_tasks.harness import vendor as vd
from bench_tasks.spec import all_tasks

pytestmark = pytest.mark.gpu

TASKS = {t.name: t for t in all_tasks()}
REFS = vd.references()
VARIANTS = [(t, p) for t in sorted(set(REFS) & set(TASKS)) for p in TASKS[t].prototypes]
IDS = [f"{t}-{p}-{'+'.join(REFS[t].libraries)}" for t, p in VARIANTS]


@pytest.fixture(scope="session")
def vendor_settings(harness_settings):
    """Every vendor reference, baseline and driver compiled up front on all cores (CUB compiles take ~10 s)."""
    from concurrent.futures import ThreadPoolExecutor

    from bench_tasks import load_task

    with ThreadPoolExecutor() as pool:
        list(pool.map(lambda v: vd.prebuild_vendor(load_task(v[0]).variant(v[1]), harness_settings), VARIANTS))
    return harness_settings


@pytest.mark.parametrize(("task", "precision"), VARIANTS, ids=IDS)
def test_vendor_reference_passes_every_paper_size_and_is_timed(task, precision, vendor_settings):
    r = evaluate(task, precision, sizes="paper", settings=vendor_settings, implementation="vendor")
    assert r.verdict == Verdict.ok, f"{r.message}\n{r.log[-3000:]}"
    assert r.implementation == "vendor" and r.vendor_libraries == list(REFS[task].libraries) and not r.baseline_only
    assert len(r.rows) == len(TASKS[task].size_list("paper"))
    for row in r.rows:
        mine = [c for c in row.checks if c.impl == "candidate"]
        stages = {c.stage for c in mine}
        assert row.passed and mine and all(c.passed for c in mine), row.params
        assert {"first", "second", "after_timing"} <= stages, row.params
        assert row.candidate is not None and row.baseline is not None and row.speedup is not None, row.params
        assert row.candidate.median_us >= 0.9 * (row.roofline_floor_us or 0.0)
    assert r.score is not None and r.score > 0


def test_bench_run_vendor_and_report_end_to_end(tmp_path, vendor_settings, monkeypatch):
    """`bench run --vendor`: the vendor reference where there is one, the baseline alone where not (RELU),
    over two size sets, the second command appending to the first's file; `bench report` renders it."""
    monkeypatch.setenv("CUDAMASTER_HARNESS__CACHE_DIR", str(vendor_settings.cache_dir))
    monkeypatch.setenv("CUDAMASTER_HARNESS__MAX_SECONDS_PER_SIZE", "0.3")
    from settings import reset_settings

    reset_settings()
    out = tmp_path / "run.json"
    runner = CliRunner()
    res = runner.invoke(app, ["run", "--vendor", "-t", "vector_add", "-p", "fp32", "--sizes", "paper,edge", "-o", str(out)])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["run", "--vendor", "-t", "RELU", "-p", "fp32", "--sizes", "paper,edge", "-o", str(out), "--append"])
    reset_settings()
    assert res.exit_code == 0, res.output
    assert json.loads(out.read_text())["size_set"] == "paper,edge"
    results = json.loads(out.read_text())["results"]
    got = sorted((r["task"], r["implementation"], r["size_set"]) for r in results)
    assert got == [
        ("RELU", "baseline", "edge"),
        ("RELU", "baseline", "paper"),
        ("vector_add", "vendor", "edge"),
        ("vector_add", "vendor", "paper"),
    ]
    res = runner.invoke(app, ["report", str(out)])
    assert res.exit_code == 0, res.output
    assert "vector_add/fp32" in out.with_name("run.report.md").read_text()
