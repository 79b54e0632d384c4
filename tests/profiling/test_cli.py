import json

import pytest
from typer.testing import CliRunner

from profiling.cli import app
from settings import reset_settings

from .helpers import FIXTURES, fake_ncu

runner = CliRunner()


@pytest.fixture(autouse=True)
def fresh_settings():
    reset_settings()
    yield
    reset_settings()


def test_classify_saved_csv_both_rules():
    r = runner.invoke(app, ["classify", str(FIXTURES / "synthetic_saxpy_raw.csv")])
    assert r.exit_code == 0, r.output
    assert "memory bandwidth bound (sol rule)" in r.output and "DRAM Throughput: 70.72 %" in r.output
    r = runner.invoke(app, ["classify", str(FIXTURES / "synthetic_saxpy_raw.csv"), "--rule", "published"])
    assert r.exit_code == 0 and "compute bound (published rule)" in r.output


def test_classify_with_fitted_thresholds(tmp_path):
    t = tmp_path / "t.json"
    t.write_text(json.dumps({"thresholds": {"published_pct": 40.0, "sol_latency_pct": 60.0}}))
    r = runner.invoke(app, ["classify", str(FIXTURES / "synthetic_saxpy_raw.csv"), "--rule", "published", "--thresholds", str(t)])
    assert r.exit_code == 0 and "memory bandwidth bound (published rule)" in r.output


def test_classify_bad_input_gives_clear_errors_not_tracebacks(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\n")
    for args, words in (
        (["classify", str(bad)], "--csv --page raw"),
        (["classify", str(tmp_path / "missing.csv")], "cannot read"),
        (["classify", str(FIXTURES / "synthetic_saxpy_raw.csv"), "--rule", "magic"], "unknown rule"),
        (["classify", str(FIXTURES / "synthetic_no_kernels.txt")], "no kernel"),
    ):
        r = runner.invoke(app, args)
        assert r.exit_code != 0, args
        assert words in r.output, (args, r.output)
        assert "Traceback" not in r.output


def test_fit_thresholds_command(tmp_path):
    from profiling.parse import parse_report
    from profiling.report import ProfileReport

    reports = [
        ProfileReport.from_kernels(parse_report((FIXTURES / f).read_text()))
        for f in ("synthetic_saxpy_raw.csv", "synthetic_fma_raw.csv", "synthetic_chase_raw.csv")
    ]
    run = tmp_path / "run.json"
    run.write_text(json.dumps([r.model_dump(mode="json") for r in reports]))
    out = tmp_path / "thresholds.json"
    r = runner.invoke(app, ["fit-thresholds", str(run), "--out", str(out)])
    assert r.exit_code == 0, r.output
    fitted = json.loads(out.read_text())
    assert fitted["count"] == 3 and len(fitted["data"]) == 3 and 2.3 < fitted["thresholds"]["sol_latency_pct"] < 70.72
    r = runner.invoke(app, ["fit-thresholds", str(tmp_path / "nope.json")])
    assert r.exit_code == 1 and "cannot read" in r.output


def test_profile_task_without_ncu_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("CUDAMASTER_PROFILING__NCU", "/nonexistent/ncu")
    for args in (["vector_add", "--precision", "fp32"], ["run", "vector_add", "-p", "fp32"]):
        r = runner.invoke(app, args)
        assert r.exit_code == 1 and "CUDAMASTER_PROFILING__NCU" in r.output and "Traceback" not in r.output


def test_profile_bad_size_and_unknown_task(monkeypatch, tmp_path):
    monkeypatch.setenv("CUDAMASTER_PROFILING__NCU", str(fake_ncu(tmp_path, "exit 0")))
    r = runner.invoke(app, ["vector_add", "--size", "N"])
    assert r.exit_code == 2 and "NAME=VALUE" in r.output
    r = runner.invoke(app, ["no_such_task", "-p", "fp32"])
    assert r.exit_code == 1 and "unknown task" in r.output


@pytest.mark.slow
def test_profile_task_with_fake_ncu(monkeypatch, tmp_path, unsandboxed):
    monkeypatch.setenv("CUDAMASTER_PROFILING__NCU", str(fake_ncu(tmp_path, f'cp "{FIXTURES / "synthetic_chase_raw.csv"}" "$LOG"')))
    saved = tmp_path / "report.json"
    r = runner.invoke(app, ["vector_add", "-p", "fp32", "--size", "N=4096", "--save-json", str(saved), "--tokens"])
    assert r.exit_code == 0, r.output
    assert "vector_add/fp32 baseline at {'N': 4096}" in r.output and "memory latency bound" in r.output
    assert "tokens (" in r.output
    assert json.loads(saved.read_text())["params"] == {"N": 4096}


def test_score_labelled_command(tmp_path):
    import shutil

    shutil.copy(FIXTURES / "synthetic_saxpy_raw.csv", tmp_path / "saxpy_fp32.csv")
    shutil.copy(FIXTURES / "synthetic_fma_raw.csv", tmp_path / "fma_ilp_fp32.csv")
    out = tmp_path / "labelled.json"
    r = runner.invoke(app, ["score-labelled", str(tmp_path), "--save-json", str(out)])
    assert r.exit_code == 0, r.output
    assert "published: 1/2 correct" in r.output and "sol: 2/2 correct" in r.output
    assert len(json.loads(out.read_text())) == 2
