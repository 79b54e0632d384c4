"""compute-sanitizer verdicts without a GPU: the report parser on recorded reports (tests/fixtures/sanitizer), the
verdict rules, the choice of sizes, and `not_run` when the tool is missing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench_tasks import load_task
from bench_tasks.harness import sanitize as sz
from bench_tasks.harness import sanitizer_report as report
from bench_tasks.harness.result import SANITIZER_TOOLS, SanitizerStatus, SanitizerVerdict, sanitizer_findings_text, sanitizer_status
from settings import HarnessSettings
from tests.conftest import requires_nvcc

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "sanitizer"


def recorded(name: str) -> str:
    return (FIXTURES / name).read_text()


@pytest.mark.parametrize(
    ("fixture", "errors", "kernel", "first"),
    [
        ("memcheck_oob.txt", 2, "vector_add_optimized_kernel", "Invalid __global__ read of size 4 bytes"),
        ("racecheck_race.txt", 1, "block_sum_optimized", "Error: Race reported between Write access at"),
        ("initcheck_uninit.txt", 256, "scratch_sum_optimized_kernel", "Uninitialized __global__ memory read of size 4 bytes"),
        ("synccheck_divergent.txt", 8, "divergent_sync_optimized", "Barrier error detected. Divergent thread(s) in warp"),
        ("memcheck_old_format.txt", 1, "relu_optimized_kernel", "Invalid __global__ write of size 4"),
    ],
)
def test_recorded_reports_with_findings_name_the_kernel_count_and_first_lines(fixture, errors, kernel, first):
    run = report.parse(recorded(fixture))
    assert run.completed and run.errors == errors and run.kernel == kernel
    assert run.report[0].startswith(first)
    assert not any(line.startswith("=========") or "SUMMARY" in line for line in run.report)
    assert "result line" not in " ".join(run.report) and "CMERR" not in " ".join(run.report)  # the program's output is not the tool's


@pytest.mark.parametrize("fixture", ["memcheck_clean.txt", "racecheck_clean.txt"])
def test_recorded_clean_reports_are_clean(fixture):
    run = report.parse(recorded(fixture))
    assert run.completed and run.errors == 0 and run.report == [] and not run.unsupported


def test_report_lines_are_capped():
    many = "========= COMPUTE-SANITIZER\n" + "".join(
        f"========= Invalid __global__ read of size 4 bytes {'x' * 900} {i}\n" for i in range(100)
    )
    run = report.parse(many + "========= ERROR SUMMARY: 100 errors\n")
    assert len(run.report) == report.MAX_REPORT_LINES and all(len(line) <= report.MAX_LINE_CHARS for line in run.report)


def test_a_device_the_runtime_refuses_is_not_run_with_the_reason():
    run = report.parse(recorded("unsupported_device.txt"))
    assert not run.completed and "Device not supported" in run.unsupported
    verdict = sz.verdict_of_run("memcheck", 3, recorded("unsupported_device.txt"), {"N": 1}, 15)
    assert verdict is not None and verdict.status == SanitizerStatus.not_run and "Device not supported" in verdict.reason


def test_a_report_without_its_summary_is_never_clean():
    verdict = sz.verdict_of_run("initcheck", 0, recorded("truncated.txt"), {"N": 1}, 15)
    assert verdict is not None and verdict.status == SanitizerStatus.not_run and "without its summary" in verdict.reason


def test_time_limit_and_findings_and_clean_verdicts():
    late = sz.verdict_of_run("racecheck", None, "", {"N": 4096}, 15)
    assert late is not None and late.status == SanitizerStatus.not_run and late.reason.startswith("time limit")
    found = sz.verdict_of_run("racecheck", sz.ERROR_EXITCODE, recorded("racecheck_race.txt"), {"N": 4096}, 15)
    assert found is not None and found.status == SanitizerStatus.findings and found.kernel == "block_sum_optimized"
    assert found.report[0] == "size {'N': 4096}"
    assert sz.verdict_of_run("memcheck", 0, recorded("memcheck_clean.txt"), {"N": 4096}, 15) is None
    # the kernel's own run failed with no error from the tool: not clean either
    failed = sz.verdict_of_run("synccheck", 3, "CMERR cuda boom\n========= ERROR SUMMARY: 0 errors\n", {"N": 1}, 15)
    assert failed is not None and failed.status == SanitizerStatus.not_run


def _runner(outputs: dict[str, str], calls: list[str]):
    def run(prefix: list[str], timeout: float) -> tuple[int | None, str]:
        tool = prefix[prefix.index("--tool") + 1]
        calls.append(tool)
        text = outputs.get(tool, recorded("memcheck_clean.txt"))
        return (sz.ERROR_EXITCODE if "errors" in text and "0 errors" not in text else 0), text

    return run


def test_every_tool_runs_at_every_size_and_findings_stop_that_tool():
    calls: list[str] = []
    run = _runner({"racecheck": recorded("racecheck_race.txt")}, calls)
    verdicts = sz.sanitize_runs("compute-sanitizer", [({"N": 1024}, run), ({"N": 37}, run)], SANITIZER_TOOLS, 15)
    by_tool = {v.tool: v for v in verdicts}
    assert [v.tool for v in verdicts] == list(SANITIZER_TOOLS)
    assert by_tool["racecheck"].status == SanitizerStatus.findings and by_tool["racecheck"].sizes == [{"N": 1024}]
    assert all(
        by_tool[t].status == SanitizerStatus.clean and by_tool[t].sizes == [{"N": 1024}, {"N": 37}]
        for t in ("memcheck", "initcheck", "synccheck")
    )
    assert calls.count("racecheck") == 1 and calls.count("memcheck") == 2
    assert sanitizer_status(verdicts) == SanitizerStatus.findings
    assert "block_sum_optimized" in sanitizer_findings_text(verdicts)


def test_a_refusing_runtime_costs_one_run_and_marks_every_tool_not_run():
    calls: list[str] = []
    run = _runner({t: recorded("unsupported_device.txt") for t in SANITIZER_TOOLS}, calls)
    verdicts = sz.sanitize_runs("compute-sanitizer", [({"N": 1024}, run), ({"N": 37}, run)], SANITIZER_TOOLS, 15)
    assert calls == ["memcheck"]
    assert all(v.status == SanitizerStatus.not_run and "Device not supported" in v.reason for v in verdicts)
    assert sanitizer_status(verdicts) == SanitizerStatus.not_run


def test_overall_status_is_clean_only_when_all_four_tools_ran_clean():
    clean = [SanitizerVerdict(tool=t, status=SanitizerStatus.clean) for t in SANITIZER_TOOLS]
    assert sanitizer_status(clean) == SanitizerStatus.clean
    assert sanitizer_status(clean[:3]) == SanitizerStatus.not_run  # a tool never asked is no evidence
    assert sanitizer_status([]) is None
    assert sanitizer_status([v.model_dump(mode="json") for v in clean]) == SanitizerStatus.clean


def test_sizes_are_the_smallest_paper_size_and_the_most_irregular_edge_size():
    task = load_task("vector_add")
    sizes = sz.sanitizer_sizes(task)
    smallest = min(task.size_list("paper"), key=task.complexity_of)
    assert sizes[0] == smallest
    assert len(sizes) == 2 and sizes[1] in task.size_list("edge")
    assert any(v % 32 for v in sizes[1].values()) or not any(any(v % 32 for v in e.values()) for e in task.size_list("edge"))


def test_FAKE_missing_compute_sanitizer_gives_not_run_for_every_tool(monkeypatch, tmp_path):
    """No compute-sanitizer anywhere (this CPU machine has none; the fallbacks are pointed away): four not_run
    verdicts saying so, and nothing is compiled or run."""
    monkeypatch.setattr(sz, "FALLBACKS", (tmp_path / "none" / "compute-sanitizer",))
    settings = HarnessSettings(compute_sanitizer=str(tmp_path / "compute-sanitizer"), nvcc=str(tmp_path / "nvcc"), cache_dir=tmp_path)
    verdicts = sz.sanitize("vector_add", "fp32", "this would not even compile", settings=settings)
    assert [v.tool for v in verdicts] == list(SANITIZER_TOOLS)
    assert all(v.status == SanitizerStatus.not_run and "compute-sanitizer not found" in v.reason for v in verdicts)
    assert sanitizer_status(verdicts) == SanitizerStatus.not_run


def test_the_report_has_a_sanitizer_column(tmp_path):
    from bench_tasks.harness.result import EvaluationResult, Verdict
    from bench_tasks.report import load_run, summarize, to_markdown

    racy = [
        SanitizerVerdict(tool=t, status=SanitizerStatus.findings if t == "racecheck" else SanitizerStatus.clean) for t in SANITIZER_TOOLS
    ]
    results = [
        EvaluationResult(task="vector_add", precision="fp32", verdict=Verdict.ok, implementation="candidate", sanitizer=racy),
        EvaluationResult(task="RELU", precision="fp32", verdict=Verdict.ok, implementation="candidate"),
    ]
    path = tmp_path / "run.json"
    path.write_text(json.dumps({"provenance": {}, "size_set": "paper", "results": [r.model_dump(mode="json") for r in results]}))
    md = to_markdown(summarize(load_run(path)))
    header = next(line for line in md.splitlines() if line.startswith("| variant") and "sanitizer" in line)
    column = header.split("|").index(" sanitizer ")
    cells = {
        line.split("|")[1].strip(): line.split("|")[column].strip() for line in md.splitlines() if line.startswith("| ") and "fp32" in line
    }
    assert cells["vector_add/fp32"] == "candidate: findings" and cells["RELU/fp32"] == "-"


def test_FAKE_bench_eval_sanitize_prints_and_stores_a_verdict_per_tool(tmp_path, monkeypatch, harness_settings):
    """`bench eval --sanitize` with a FAKE evaluation (no GPU here) and no compute-sanitizer: four not_run verdicts,
    printed and in the JSON result."""
    from typer.testing import CliRunner

    import bench_tasks.harness as harness
    from app.cli import cli
    from bench_tasks.harness.result import EvaluationResult, Verdict

    monkeypatch.setattr(sz, "find_sanitizer", lambda settings: None)
    monkeypatch.setattr(
        harness, "evaluate", lambda task, precision, *a, **k: EvaluationResult(task=task, precision=precision, verdict=Verdict.ok)
    )
    out = tmp_path / "result.json"
    candidate = Path(__file__).parent / "candidates" / "fast.cu"
    res = CliRunner().invoke(
        cli, ["bench", "eval", "vector_add", "-c", str(candidate), "--sanitize", "--json", str(out)], env={"COLUMNS": "300"}
    )
    assert res.exit_code == 0, res.output
    for tool in SANITIZER_TOOLS:
        assert f"compute-sanitizer {tool}: not_run compute-sanitizer not found" in res.output
    stored = json.loads(out.read_text())["result"]["sanitizer"]
    assert [v["status"] for v in stored] == ["not_run"] * 4


@requires_nvcc
@pytest.mark.parametrize("file", sorted(p.name for p in (Path(__file__).parent / "sanitizer_controls").glob("*.cu")))
def test_each_positive_control_passes_the_harness_compile_and_symbol_checks(file, harness_settings):
    """A control the harness refused would never reach its tool (tests/bench/test_sanitizer_gpu.py runs them)."""
    from bench_tasks.harness import Verdict
    from bench_tasks.harness.evaluate import compile_only

    source = (Path(__file__).parent / "sanitizer_controls" / file).read_bytes()
    verdict, message, _ = compile_only("vector_add", "fp32", source, settings=harness_settings)
    assert verdict == Verdict.ok, f"{file}: {message}"


def test_a_baselines_documented_findings_are_read_from_its_task_toml():
    task = load_task("vector_add")
    assert sz.documented_findings(task) == {}
    documented = type(task)(**{**task.__dict__, "notes": {**task.notes, "sanitizer": "racecheck: benign; nonsense: x"}})
    assert sz.documented_findings(documented) == {"racecheck": "benign"}
