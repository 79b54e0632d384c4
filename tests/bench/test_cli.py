"""`cudamaster bench` on the CPU: list, compile-only evaluation, clear errors, the no-GPU message."""

from pathlib import Path

import pytest
from typer.testing import CliRunner

from app.cli import cli
from tests.conftest import gpu_present, requires_nvcc

CANDIDATES = Path(__file__).parent / "candidates"
runner = CliRunner()


def test_list_shows_every_task_with_sizes():
    out = runner.invoke(cli, ["bench", "list"], env={"COLUMNS": "200"})
    assert out.exit_code == 0
    for name in ("vector_add", "dot_product", "matrix_mul", "spmv_csr", "rms_norm", "stencil_2d"):
        assert name in out.output
    assert "fp32, bf16" in out.output and "262144" in out.output


@requires_nvcc
def test_eval_compile_only_reports_verdicts(harness_settings, monkeypatch):
    monkeypatch.setenv("CUDAMASTER_HARNESS__CACHE_DIR", str(harness_settings.cache_dir))  # the run's one compile cache
    ok = runner.invoke(cli, ["bench", "eval", "vector_add", "-c", str(CANDIDATES / "fast.cu"), "--compile-only"])
    assert ok.exit_code == 0 and ok.stdout.startswith("ok")
    assert "sandbox: bwrap" in " ".join(ok.stderr.split()) or "sandbox: none" in ok.stderr  # which sandbox compiled it
    bad = runner.invoke(
        cli, ["bench", "eval", "vector_add", "-c", str(CANDIDATES / "system_call.cu"), "--compile-only"], env={"COLUMNS": "200"}
    )
    assert bad.exit_code == 1 and "rejected" in bad.output and "system" in bad.output


@pytest.mark.parametrize(
    "args, words",
    [
        (["bench", "eval", "nope", "-c", "x.cu"], "unknown task 'nope'"),
        (["bench", "eval", "vector_add", "-c", "x.cu", "-p", "fp64"], "'fp64' is not one of 'fp32', 'bf16'"),
        (["bench", "eval", "vector_add", "-c", "/nonexistent.cu"], "does not exist"),
        (["bench", "run", "--sizes", "huge"], "unknown size set 'huge'"),
        (["bench", "run", "--task", "nope"], "unknown task 'nope'"),
    ],
)
def test_bad_input_is_a_clear_error(args, words):
    out = runner.invoke(cli, args, env={"COLUMNS": "300"})
    assert out.exit_code == 2
    assert words in " ".join(out.output.split())


@pytest.mark.skipif(gpu_present()[0], reason="checks the no-GPU message")
def test_run_without_a_gpu_says_so_and_what_still_works(tmp_path):
    out = runner.invoke(cli, ["bench", "run", "--task", "vector_add", "-o", str(tmp_path / "r.json")], env={"COLUMNS": "300"})
    assert out.exit_code == 3
    text = " ".join(out.output.split())
    assert "No NVIDIA GPU found" in text and "bench list" in text and "--compile-only" in text


@pytest.mark.parametrize(
    "args, words",
    [
        (["bench", "eval", "relu", "-c", "x.cu"], "unknown task 'relu': did you mean RELU?"),
        (["bench", "run", "--task", "vectoradd"], "did you mean vector_add?"),
        (["bench", "eval", "vector_add", "-c", str(CANDIDATES)], "is a directory: pass a .cu file"),
        (
            ["bench", "eval", "vector_add", "-c", str(CANDIDATES / "fast.cu"), "-p", "bf16"],
            "defines vector_add_optimized (the fp32 entry) but not vector_add_bf16_optimized",
        ),
    ],
)
def test_eval_says_what_to_change(args, words):
    out = runner.invoke(cli, args, env={"COLUMNS": "300"})
    assert out.exit_code == 2
    text = " ".join(out.output.split())
    assert words in text and "known tasks" not in text


@requires_nvcc
def test_compile_only_success_says_what_was_checked(harness_settings, monkeypatch):
    monkeypatch.setenv("CUDAMASTER_HARNESS__CACHE_DIR", str(harness_settings.cache_dir))  # the run's one compile cache
    monkeypatch.setenv("CUDAMASTER_HARNESS__ALLOW_UNSANDBOXED", "true")
    out = runner.invoke(cli, ["bench", "eval", "vector_add", "-c", str(CANDIDATES / "fast.cu"), "--compile-only"], env={"COLUMNS": "300"})
    assert out.exit_code == 0, out.output
    text = " ".join(out.stdout.split())
    assert text.startswith("ok: compiled") and "entry vector_add_optimized defined" in text and "object" in text and " s;" in text
