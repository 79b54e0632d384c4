"""evaluate() end to end on the CPU with a FAKE driver (tests/bench/fake_driver.py: the runtime's protocol
in Python, no GPU): datasets drawn while the driver waits for them, outputs checked as they are written,
timed calls chosen at random checked against a reference for their redrawn inputs, stage seconds."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

from bench_tasks.harness import Verdict, evaluate
from bench_tasks.harness.result import SCHEMA_VERSION
from settings import HarnessSettings

EV = sys.modules["bench_tasks.harness.evaluate"]
FAKE = Path(__file__).parent / "fake_driver.py"


@pytest.fixture
def fake_driver(monkeypatch, tmp_path):
    """evaluate() runs the fake driver instead of compiling one; returns a function setting its mode."""
    exe = tmp_path / "fake-driver"
    exe.write_text(f'#!/bin/sh\nexec {sys.executable} {FAKE} "$@"\n')
    exe.chmod(0o755)
    monkeypatch.setattr(EV, "_build", lambda *a, **k: exe)
    monkeypatch.setattr(EV, "require_gpu", lambda settings: None)
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).parents[2]))

    def use(variant: str, sizes: list[dict[str, int]], mode: str = "honest") -> None:
        monkeypatch.setenv("CM_FAKE_VARIANT", variant)
        monkeypatch.setenv("CM_FAKE_SIZES", json.dumps(sizes))
        monkeypatch.setenv("CM_FAKE_MODE", mode)

    return use


def _settings(tmp_path, **kw) -> HarnessSettings:
    # The fake driver is a Python script of ours: it runs unsandboxed (the sandbox is tested in test_sandbox.py).
    # driver_cpus 0: a machine of 8 cores or more would otherwise move the test process's threads off the driver's
    # cores (test_cpus.py tests that split).
    kw.setdefault("driver_cpus", 0)
    return HarnessSettings(
        cache_dir=tmp_path / "cache",
        scratch_root=tmp_path / "scratch",
        min_pairs=6,
        data_workers=2,
        sandbox="none",
        allow_unsandboxed=True,
        **kw,
    )


SIZES = [{"N": 1000}, {"N": 4099}]


def test_an_honest_fake_run_is_ok_with_timed_checks_and_stages_with_a_fake_driver(fake_driver, tmp_path):
    fake_driver("vector_add/fp32", SIZES)
    result = evaluate("vector_add", "fp32", "// fake", SIZES, settings=_settings(tmp_path))
    assert result.verdict == Verdict.ok, result.message
    for row in result.rows:
        timed = [c for c in row.checks if c.stage == "timed_call"]
        assert len(timed) >= 3 and all(c.passed and c.impl == "candidate" and c.call is not None for c in timed)
        assert {c.stage for c in row.checks} == {"first", "second", "timed_call", "after_timing"}
        assert row.speedup == pytest.approx(2.0, rel=0.05)
    assert result.refreshed_inputs == ["A", "B"] and len(result.refresh_key) == 16
    assert {"compile", "inputs", "references", "output_checks", "driver", "timing", "gpu_checks"} <= set(result.stages)
    # the parts of the driver's stages that show what the GPU waits for (two sizes: each part summed over both)
    assert result.stages["gpu_input_wait"] == pytest.approx(0.008)
    assert result.stages["timing_warmup"] == pytest.approx(0.002) and result.stages["timing_checked_pairs"] == pytest.approx(0.004)


@pytest.mark.parametrize("mode, words", [("replay", "timed call"), ("skip_odd", "not finite")])
def test_wrong_timed_calls_are_wrong_answer_naming_the_timed_call_with_a_fake_driver(fake_driver, tmp_path, mode, words):
    fake_driver("vector_add/fp32", SIZES, mode)
    result = evaluate("vector_add", "fp32", "// fake", SIZES, settings=_settings(tmp_path))
    assert result.verdict == Verdict.wrong_answer, result.message
    assert "timed call" in result.message and words in result.message
    assert "inputs redrawn on the device" in result.message


def test_saved_inputs_that_are_not_the_generators_draw_are_a_runtime_error_with_a_fake_driver(fake_driver, tmp_path):
    fake_driver("vector_add/fp32", SIZES, "bad_draw")
    result = evaluate("vector_add", "fp32", "// fake", SIZES, settings=_settings(tmp_path))
    assert result.verdict == Verdict.runtime_error, result.message
    assert "differs from the generator's draw" in result.message


def test_a_hung_candidate_call_ends_as_timeout_at_the_call_limit_not_the_run_timeout_with_a_fake_driver(fake_driver, tmp_path):
    fake_driver("vector_add/fp32", SIZES, "hang")
    started = time.monotonic()
    settings = _settings(tmp_path, call_timeout_floor_s=0.5, run_timeout_s=120)
    result = evaluate("vector_add", "fp32", "// fake", SIZES, settings=settings)
    assert result.verdict == Verdict.timeout, result.message
    assert "ran past 0.5 s" in result.message
    assert time.monotonic() - started < 60
    fake_driver("vector_add/fp32", SIZES)  # the next evaluation is fine
    assert evaluate("vector_add", "fp32", "// fake", SIZES, settings=settings).verdict == Verdict.ok


def test_sampled_sizes_check_the_sample_and_count_unwritten_elements_with_a_fake_driver(fake_driver, tmp_path):
    sizes = [{"N": 5000}]
    settings = _settings(tmp_path, reference_full_elements=1000, reference_sample=300)
    fake_driver("vector_add/bf16", sizes)
    result = evaluate("vector_add", "bf16", "// fake", sizes, settings=settings)
    assert result.verdict == Verdict.ok, result.message
    assert all(c.checked_elements <= 302 for c in result.rows[0].checks)
    fake_driver("vector_add/bf16", sizes, "skip_odd")
    result = evaluate("vector_add", "bf16", "// fake", sizes, settings=settings)
    assert result.verdict == Verdict.wrong_answer and "timed call" in result.message and "not finite (unwritten or NaN)" in result.message


def test_structure_is_kept_and_values_redrawn_in_timed_calls_with_a_fake_driver(fake_driver, tmp_path):
    sizes = [{"rows": 300, "cols": 200}]
    fake_driver("spmv_csr/fp32", sizes)
    result = evaluate("spmv_csr", "fp32", "// fake", sizes, settings=_settings(tmp_path))
    assert result.verdict == Verdict.ok, result.message
    assert result.refreshed_inputs == ["values", "x"]
    fake_driver("spmv_csr/fp32", sizes, "replay")
    result = evaluate("spmv_csr", "fp32", "// fake", sizes, settings=_settings(tmp_path))
    assert result.verdict == Verdict.wrong_answer and "timed call" in result.message


def test_check_datasets_and_full_references_are_cached_for_the_next_evaluation_with_a_fake_driver(fake_driver, tmp_path):
    fake_driver("vector_add/fp32", SIZES)
    settings = _settings(tmp_path)
    evaluate("vector_add", "fp32", "// fake", SIZES, settings=settings)
    from bench_tasks.harness.datacache import DataCache

    cache = DataCache(settings)
    entries = sorted(cache.root.iterdir())
    assert len(entries) == 2 * 3  # two sizes, seeds 1-3 (the fresh seed is never cached)
    # the references apart from the datasets (a sandboxed driver sees its datasets, never the answers)
    assert all((e / "ready").exists() and not (e / "ref_C.npy").exists() and (cache.refs / e.name / "ref_C.npy").exists() for e in entries)
    again = evaluate("vector_add", "fp32", "// fake", SIZES, settings=settings)
    assert again.verdict == Verdict.ok
    assert sorted(cache.root.iterdir()) == entries


def test_the_pipeline_compiles_and_draws_ahead_and_keeps_every_check_with_a_fake_driver(fake_driver, tmp_path, monkeypatch):
    from bench_tasks.harness import pipeline
    from bench_tasks.harness.datacache import DataCache

    built, ready_at_start = [], []
    monkeypatch.setattr(pipeline, "prebuild", lambda job, settings: built.append(job.key))
    monkeypatch.setattr(pipeline, "prebuild_runtime", lambda settings: None)
    settings = _settings(tmp_path)
    cache = DataCache(settings)
    variant_of = {"vector_add/fp32": "vector_add/fp32", "vector_add/bf16": "vector_add/bf16"}
    jobs = [
        pipeline.Job("vector_add", "fp32", "// a"),
        pipeline.Job("vector_add", "bf16", "// b"),
        pipeline.Job("vector_add", "fp32", "// c"),
    ]

    def started(job, compiled):
        from bench_tasks import load_task

        fake_driver(variant_of[job.key], SIZES)
        variant = load_task(job.task).variant(job.precision)
        ready_at_start.append(all((cache.entry(variant, p, s) / "ready").exists() for p in SIZES for s in settings.seeds))

    results = pipeline.run_pipeline(jobs, SIZES, settings, compile_workers=2, on_start=started)
    assert [r.verdict for r in results] == [Verdict.ok] * 3
    assert sorted(built) == sorted(j.key for j in jobs)
    assert ready_at_start[1:] == [True, True]  # drawn (with references) while the previous variant ran
    # what the GPU waited for before each evaluation (outside wall_seconds) is in its stages
    assert all(r.stages["pipeline_wait_compile"] >= 0 and r.stages["pipeline_wait_inputs"] >= 0 for r in results)
    assert all(any(c.stage == "timed_call" for c in row.checks) for r in results for row in r.rows)


def test_bench_run_is_one_command_with_a_progress_bar_and_stage_seconds_with_a_fake_driver(fake_driver, tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from app.cli import cli
    from bench_tasks import harness
    from bench_tasks.harness import pipeline
    from settings import reset_settings

    monkeypatch.setattr(harness, "require_gpu", lambda settings: None)
    monkeypatch.setattr(pipeline, "prebuild", lambda job, settings: None)
    monkeypatch.setattr(pipeline, "prebuild_runtime", lambda settings: None)
    monkeypatch.setenv("CUDAMASTER_HARNESS__CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("CUDAMASTER_HARNESS__MIN_PAIRS", "6")
    monkeypatch.setenv("CUDAMASTER_HARNESS__SCRATCH_ROOT", str(tmp_path / "scratch"))
    monkeypatch.setenv("CUDAMASTER_HARNESS__SANDBOX", "none")  # the fake driver is a Python script of ours
    monkeypatch.setenv("CUDAMASTER_HARNESS__ALLOW_UNSANDBOXED", "true")
    reset_settings()
    sizes = [{"N": 1024}, {"N": 4096}, {"N": 16384}, {"N": 65536}, {"N": 262144}]  # vector_add's paper sizes
    fake_driver("vector_add/fp32", sizes)
    out_file = tmp_path / "run.json"
    try:
        out = CliRunner().invoke(
            cli, ["bench", "run", "-t", "vector_add", "-p", "fp32", "--jobs", "2", "-o", str(out_file)], env={"COLUMNS": "200"}
        )
    finally:
        reset_settings()
    assert out.exit_code == 0, out.output
    assert "vector_add/fp32" in out.output and "results written" in out.output
    doc = json.loads(out_file.read_text())
    (result,) = doc["results"]
    assert result["verdict"] == "ok" and result["schema_version"] == SCHEMA_VERSION
    assert {"compile", "inputs", "driver", "timing"} <= set(result["stages"]) and doc["wall_seconds"] > 0

    # A run cut short continues with --append --skip-done: what the file holds is not measured again.
    def again(*extra: str):
        try:
            return CliRunner().invoke(cli, ["bench", "run", "-t", "vector_add", "-p", "fp32", "-o", str(out_file), *extra])
        finally:
            reset_settings()

    assert again("--skip-done").exit_code != 0  # without --append it would overwrite what it should continue
    out = again("--append", "--skip-done")
    assert out.exit_code == 0, out.output
    assert len(json.loads(out_file.read_text())["results"]) == 1
    out = again("--append")  # without --skip-done, --append measures again
    assert out.exit_code == 0, out.output
    appended = json.loads(out_file.read_text())
    assert len(appended["results"]) == 2
    # the first command's provenance is kept beside this one's (two appends: two earlier commands)
    assert len(appended["appended_to"]) == 2 and appended["appended_to"][0] == doc["provenance"]


def test_bench_run_saves_the_other_variants_and_exits_non_zero_when_one_ends_without_a_result(tmp_path, monkeypatch):
    """A variant whose evaluation fails in the harness (here a faked error) is named at the end, the others'
    results are saved, and the command exits 1: a script or CI running the suite sees it (it exited 0)."""
    from typer.testing import CliRunner

    from app.cli import cli
    from bench_tasks import harness
    from bench_tasks.harness import pipeline
    from bench_tasks.harness.result import EvaluationResult
    from settings import reset_settings

    def evaluate(task, precision, *args, **kwargs):
        kwargs["on_timing_done"]()
        kwargs["on_driver_done"]()
        if precision == "bf16":
            raise RuntimeError("faked harness failure")
        return EvaluationResult(task=task, precision=precision, verdict=Verdict.ok, size_set="paper")

    monkeypatch.setattr(harness, "require_gpu", lambda settings: None)
    monkeypatch.setattr(pipeline, "prebuild", lambda job, settings: None)
    monkeypatch.setattr(pipeline, "prebuild_runtime", lambda settings: None)
    monkeypatch.setattr(pipeline, "dataset_tasks", lambda variant, sizes, settings: [])
    monkeypatch.setattr(pipeline, "evaluate", evaluate)
    monkeypatch.setenv("CUDAMASTER_HARNESS__CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("CUDAMASTER_HARNESS__SCRATCH_ROOT", str(tmp_path / "scratch"))
    monkeypatch.setenv("CUDAMASTER_HARNESS__SANDBOX", "none")
    monkeypatch.setenv("CUDAMASTER_HARNESS__ALLOW_UNSANDBOXED", "true")
    reset_settings()
    out_file = tmp_path / "run.json"
    try:
        out = CliRunner().invoke(cli, ["bench", "run", "-t", "vector_add", "-o", str(out_file)], env={"COLUMNS": "200"})
    finally:
        reset_settings()
    assert out.exit_code == 1, out.output
    assert "no result" in out.output and "vector_add/bf16" in out.output and "faked harness failure" in out.output
    assert [r["precision"] for r in json.loads(out_file.read_text())["results"]] == ["fp32"]


def test_shuffled_inputs_keep_their_values_and_a_replayed_loss_is_caught_with_a_fake_driver(fake_driver, tmp_path):
    # cross_entropy_loss's inputs are probability vectors: each pair permutes them (their sum stays 1).
    sizes = [{"C": 3000}]
    fake_driver("cross_entropy_loss/fp32", sizes)
    result = evaluate("cross_entropy_loss", "fp32", "// fake", sizes, settings=_settings(tmp_path))
    assert result.verdict == Verdict.ok, result.message
    assert result.refreshed_inputs == ["X", "Y"]
    fake_driver("cross_entropy_loss/fp32", sizes, "replay")
    result = evaluate("cross_entropy_loss", "fp32", "// fake", sizes, settings=_settings(tmp_path))
    assert result.verdict == Verdict.wrong_answer and "timed call" in result.message, result.message


def test_each_saved_output_and_timed_input_is_deleted_once_checked_with_a_fake_driver(fake_driver, tmp_path, monkeypatch):
    """Fake driver. The scratch directory holds what is still to be checked, not every output of the run: a suite
    of GB-sized timed inputs filled the H200 machine's disk when several evaluations kept theirs to the end."""
    kept: list[Path] = []
    monkeypatch.setattr(EV, "remove_scratch", kept.append)  # look at the scratch directories the run leaves
    fake_driver("vector_add/fp32", SIZES)
    result = evaluate("vector_add", "fp32", "// fake", SIZES, settings=_settings(tmp_path))
    assert result.verdict == Verdict.ok, result.message
    assert any(c.stage == "timed_call" for row in result.rows for c in row.checks)
    (workdir,) = [d for d in kept if d.name.startswith("cm-eval-")]
    assert (workdir / "results.txt").exists() and (workdir / "out").is_dir()
    assert sorted(p.name for p in (workdir / "out").iterdir()) == []


def test_kept_work_directories_keep_every_output_with_a_fake_driver(fake_driver, tmp_path):
    """Fake driver. keep_workdir=True (debugging, the GPU tests that read the saved timed inputs) keeps them all."""
    fake_driver("vector_add/fp32", SIZES)
    settings = _settings(tmp_path)
    result = evaluate("vector_add", "fp32", "// fake", SIZES, settings=settings, keep_workdir=True)
    assert result.verdict == Verdict.ok, result.message
    (workdir,) = list(settings.scratch_root.glob("cm-eval-*"))
    names = [p.name for p in (workdir / "out").iterdir()]
    assert any("_t" in n and "_input_" in n for n in names) and any("_candidate_first_" in n for n in names)


def test_check_datasets_and_their_references_are_drawn_while_the_candidate_compiles_with_a_fake_driver(fake_driver, tmp_path, monkeypatch):
    """Fake driver (and a fake compile that waits). From empty caches, evaluate() draws the check datasets into the
    data cache, then their full references, while the candidate compiles: the driver then finds them there."""
    import time

    from bench_tasks import load_task
    from bench_tasks.harness.datacache import DataCache

    fake_driver("vector_add/fp32", SIZES)
    settings = _settings(tmp_path)
    variant, cache = load_task("vector_add").variant("fp32"), DataCache(settings)
    exe = EV._build()  # the fixture's fake driver
    seen: list[bool] = []

    def compiling(*args, **kwargs):
        t0 = time.monotonic()
        while time.monotonic() - t0 < 20:  # a compile that takes until the references are stored
            if all(cache.has_reference(variant, p, s) for p in SIZES for s in settings.seeds):
                break
            time.sleep(0.01)
        seen.append(all(cache.ready(variant, p, s) is not None for p in SIZES for s in settings.seeds))
        seen.append(all(cache.has_reference(variant, p, s) for p in SIZES for s in settings.seeds))
        return exe

    monkeypatch.setattr(EV, "_build", compiling)
    result = evaluate("vector_add", "fp32", "// fake", SIZES, settings=settings)
    assert result.verdict == Verdict.ok, result.message
    assert seen == [True, True]
    assert "draw_wait" in result.stages


def test_the_fresh_datasets_are_drawn_while_the_candidate_compiles_and_not_again_with_a_fake_driver(fake_driver, tmp_path, monkeypatch):
    """Fake driver (and a fake compile that waits). Each size's fresh dataset (its seed secret, never cached) is
    drawn while the candidate compiles, so the driver does not wait for it; and it is drawn once."""
    import time

    fake_driver("vector_add/fp32", SIZES)
    settings = _settings(tmp_path)
    exe = EV._build()  # the fixture's fake driver
    fresh_seen: list[int] = []
    real_write = EV.write_dataset
    writes: list[tuple[int, str]] = []

    def write_dataset(variant, params, seed, directory):
        writes.append((seed, directory.name))
        return real_write(variant, params, seed, directory)

    def compiling(*args, **kwargs):
        t0 = time.monotonic()
        while time.monotonic() - t0 < 20 and len(list(settings.scratch_root.glob("cm-in-*/c*/fresh/ready"))) < len(SIZES):
            time.sleep(0.01)
        fresh_seen.append(len(list(settings.scratch_root.glob("cm-in-*/c*/fresh/ready"))))
        return exe

    monkeypatch.setattr(EV, "write_dataset", write_dataset)
    monkeypatch.setattr(EV, "_build", compiling)
    result = evaluate("vector_add", "fp32", "// fake", SIZES, settings=settings)
    assert result.verdict == Verdict.ok, result.message
    assert fresh_seen == [len(SIZES)]  # every size's, before the build returned
    fresh_seed = result.seeds[-1]
    assert sorted(name for seed, name in writes if seed == fresh_seed) == ["fresh"] * len(SIZES)  # once each
    assert not list(settings.scratch_root.glob("cm-in-*"))  # and its directory went with the evaluation


def test_an_evaluation_that_ends_early_leaves_no_draw_running_behind_it(tmp_path, monkeypatch):
    """A candidate that does not build (or no GPU) returns with none of its ahead draws still writing: on CI a draw
    left running into a scratch root that the caller then removed made the removal fail."""
    import threading
    import time

    active: list[int] = []
    finished: list[int] = []
    lock = threading.Lock()

    def tasks(variant, sizes, settings, seeds=None):
        def draw() -> None:
            with lock:
                active.append(1)
            time.sleep(0.2)
            with lock:
                finished.append(1)

        return [(draw, lambda: None) for _ in range(12)]

    monkeypatch.setattr(EV, "dataset_tasks", tasks)
    monkeypatch.setattr(EV, "_build", lambda *a, **k: (Verdict.compile_error, "nvcc: error", "log"))
    result = evaluate("vector_add", "fp32", "// does not build", SIZES, settings=_settings(tmp_path))
    assert result.verdict == Verdict.compile_error
    with lock:
        assert len(finished) == len(active) >= 1  # every draw that started has ended; the rest never started
    time.sleep(0.3)
    assert len(active) == len(finished) < 12


def test_the_speedup_row_flag_is_off_by_default_and_uses_the_one_knob_with_a_fake_driver(fake_driver, tmp_path):
    """Issue 39: one review-speedup knob (harness.review_speedup, opt-in), read by the row flags and the review queue."""
    fake_driver("vector_add/fp32", SIZES)
    plain = evaluate("vector_add", "fp32", "// fake", SIZES, settings=_settings(tmp_path))
    assert plain.verdict == Verdict.ok and all("speedup_over_review_threshold" not in row.flags for row in plain.rows)
    opted = evaluate("vector_add", "fp32", "// fake", SIZES, settings=_settings(tmp_path, review_speedup=1.5))
    assert all("speedup_over_review_threshold" in row.flags for row in opted.rows)  # the fake's speedup is 2
