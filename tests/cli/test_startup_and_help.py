"""`cudamaster` start-up and help (issue 31 item 13): the quick commands load no heavy module, flags have no
`<bool>` type, arguments read TASK in the usage line, `--precision` lists its choices, `bench list` stays one
line per task when piped and has `--json`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import typing
from pathlib import Path

import pytest
from typer.testing import CliRunner

import bench_tasks.cli
import graph.cli
from app.cli import cli
from bench_tasks.spec import PRECISIONS, all_tasks, listed_tasks, task_names

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("langgraph", "langchain_core", "openai", "fastapi", "uvicorn", "sqlalchemy", "alembic", "numpy", "scipy", "ray", "httpx")
runner = CliRunner()

# Runs the command as `cudamaster` does, then prints which heavy modules it loaded.
PROBE = """
import json, sys
heavy = json.loads(sys.argv[2])
sys.argv = ["cudamaster", *json.loads(sys.argv[1])]
import app.cli
try:
    app.cli.main()
except SystemExit:
    pass
print("LOADED=" + json.dumps(sorted(m for m in heavy if m in sys.modules)))
"""


def _loaded(args: list[str], env: dict[str, str] | None = None) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(args), json.dumps(HEAVY)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
        timeout=120,
    )
    line = [x for x in out.stdout.splitlines() if x.startswith("LOADED=")]
    assert line, out.stdout + out.stderr
    return json.loads(line[-1].removeprefix("LOADED="))


@pytest.mark.parametrize("args", [["--help"], ["bench", "list"], ["optimize", "--help"], ["bench", "eval", "--help"]])
def test_quick_commands_load_no_heavy_module(args):
    assert _loaded(args) == []


def test_keys_list_loads_the_database_layer_only(tmp_path):
    env = {"CUDAMASTER_SERVICE__DATABASE_URL": f"sqlite:///{tmp_path / 'k.db'}"}
    _loaded(["keys", "list"], env)  # the first run brings the new database to the newest schema
    assert _loaded(["keys", "list"], env) == ["sqlalchemy"]  # at the newest schema: no Alembic, no FastAPI


@pytest.mark.parametrize("args", [["optimize", "--help"], ["bench", "eval", "--help"], ["bench", "run", "--help"], ["resume", "--help"]])
def test_help_has_no_bool_metavar_nor_braced_argument(args):
    out = runner.invoke(cli, args, env={"COLUMNS": "200"})
    assert out.exit_code == 0
    assert "<bool>" not in out.output
    usage = next(line for line in out.output.splitlines() if "Usage:" in line)
    assert "{" not in usage and "}" not in usage


def test_usage_names_arguments_in_capitals():
    out = runner.invoke(cli, ["optimize", "--help"], env={"COLUMNS": "200"})
    usage = next(line for line in out.output.splitlines() if "Usage:" in line)
    assert usage.rstrip().endswith("[OPTIONS] [TASK]")  # optional: or --reference FILE (a PyTorch reference)


@pytest.mark.parametrize("args", [["optimize", "--help"], ["bench", "eval", "--help"], ["bench", "run", "--help"]])
def test_precision_has_help_and_choices(args):
    out = runner.invoke(cli, args, env={"COLUMNS": "200"})
    line = next(line for line in out.output.splitlines() if "--precision" in line)
    assert "fp32|bf16" in line
    assert len(line.split("fp32|bf16", 1)[1].strip(" │")) > 10  # a help text follows the choices


def test_precision_choices_are_the_specs():
    assert typing.get_args(graph.cli.Precision) == PRECISIONS == typing.get_args(bench_tasks.cli.Precision)


def test_bench_list_piped_is_one_line_per_task_never_wrapped():
    out = runner.invoke(cli, ["bench", "list"], env={"COLUMNS": "40"})  # CliRunner's stdout is not a terminal
    assert out.exit_code == 0
    lines = out.output.splitlines()
    assert lines[0].split("\t")[0] == "task"
    assert [line.split("\t")[0] for line in lines[1:]] == task_names()
    assert all(len(line.split("\t")) == 5 for line in lines)


def test_bench_list_json():
    out = runner.invoke(cli, ["bench", "list", "--json"])
    assert out.exit_code == 0
    entries = json.loads(out.output)
    assert [e["name"] for e in entries] == task_names()
    vector_add = next(e for e in entries if e["name"] == "vector_add")
    assert vector_add["precisions"] == ["fp32", "bf16"] and vector_add["sizes"]["paper"][0] == {"N": 1024}


def test_listed_tasks_match_the_validated_ones():
    listed = {t.name: (t.category, list(t.prototypes), t.sizes) for t in listed_tasks()}
    assert listed == {t.name: (t.category, list(t.prototypes), t.sizes) for t in all_tasks()}


def test_head_revisions_read_from_the_files_are_alembics():
    from alembic.script import ScriptDirectory

    from app.db.migrate import alembic_config, head_revisions

    assert head_revisions() == set(ScriptDirectory.from_config(alembic_config("sqlite://")).get_heads())


def test_at_head_only_once_migrated(tmp_path):
    from app.db.engine import make_engine
    from app.db.migrate import at_head, upgrade

    url = f"sqlite:///{tmp_path / 'm.db'}"
    engine = make_engine(url)
    try:
        assert not at_head(engine)  # an empty database
        upgrade(url)
        assert at_head(engine)
    finally:
        engine.dispose()


def test_harness_package_exports_the_evaluate_function_after_its_module_loads():
    import importlib
    import inspect

    module = importlib.import_module("bench_tasks.harness.evaluate")
    from bench_tasks.harness import Verdict, evaluate

    assert inspect.isfunction(evaluate) and evaluate is module.evaluate and Verdict.ok.value == "ok"


def test_serve_start_up_names_the_dashboard_and_the_sandbox(tmp_path, monkeypatch):
    import uvicorn

    monkeypatch.setattr(uvicorn, "run", lambda *args, **kwargs: None)  # no server: the start-up lines only
    out = runner.invoke(cli, ["serve", "--database-url", f"sqlite:///{tmp_path / 's.db'}", "--port", "8123"], env={"COLUMNS": "300"})
    assert out.exit_code == 0, out.output
    assert "http://127.0.0.1:8123/ (the dashboard" in out.output and "/api/v1/docs" in out.output
    sandbox = next(line for line in out.output.splitlines() if line.startswith("sandbox for untrusted kernels: "))
    assert "bwrap" in sandbox or "unavailable" in sandbox or "none" in sandbox
