"""The `optimize` / `resume` commands through typer's runner (real compiles, FAKE GPU via a
monkeypatched default evaluator, scripted LLM server)."""

from __future__ import annotations

import pytest
import typer
from typer.testing import CliRunner

import graph.runner
from graph import cli
from tests.conftest import gpu_present
from tests.graph.conftest import MODELS
from tests.support import kernels as k

app = typer.Typer()
app.command("optimize")(cli.optimize)
app.command("resume")(cli.resume)


def test_optimize_prints_progress_table_and_job_id_with_fake_gpu(tmp_path, server, fake_gpu, monkeypatch):
    monkeypatch.setattr(graph.runner, "LocalEvaluator", lambda: fake_gpu)  # FAKE GPU
    for key, value in {"BASE_URL": server.base_url, "API_KEY": "k", "STATE_DIR": str(tmp_path)}.items():
        monkeypatch.setenv(f"CUDAMASTER_AGENT__{key}", value)
    server.add(MODELS["planner"], k.plan("Grid stride"))
    server.add(MODELS["coder"], k.reply(k.fast_kernel(1.7)))
    result = CliRunner().invoke(
        app,
        [
            "optimize",
            "vector_add",
            "--precision",
            "fp32",
            "--rounds",
            "1",
            "--debug",
            "0",
            "--model",
            f"planner={MODELS['planner']}",
            "--model",
            f"coder={MODELS['coder']}",
            "--job-id",
            "clijob",
            "--checkpoint-url",
            f"sqlite:///{tmp_path / 'c.db'}",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "Grid stride" in result.output and "1.700" in result.output
    assert "cudamaster resume clijob" in result.output
    result = CliRunner().invoke(app, ["resume", "clijob", "--checkpoint-url", f"sqlite:///{tmp_path / 'c.db'}"])
    assert result.exit_code == 0 and "finished" in result.output


def test_optimize_refuses_out_of_range_rounds(tmp_path):
    result = CliRunner().invoke(app, ["optimize", "vector_add", "--precision", "fp32", "--rounds", "0"])
    assert result.exit_code == 2 and "rounds" in result.output


@pytest.mark.skipif(gpu_present()[0], reason="checks the no-GPU message")
def test_optimize_without_a_gpu_is_one_line_and_exit_3(tmp_path, harness_cache):
    env = {"COLUMNS": "300", "CUDAMASTER_HARNESS__CACHE_DIR": str(harness_cache)}  # the run's compile cache, not ~/.cache
    result = CliRunner().invoke(
        app, ["optimize", "vector_add", "--precision", "fp32", "--checkpoint-url", f"sqlite:///{tmp_path / 'c.db'}"], env=env
    )
    assert result.exit_code == 3
    text = " ".join(result.output.split())
    assert "error: no GPU:" in text and "CUDAMASTER_HARNESS__GPU" in text and "--ray" in text
    assert "During task" not in text and "cudamaster resume" not in text and "round" not in text
