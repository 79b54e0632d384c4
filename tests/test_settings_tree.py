"""The one settings tree (settings/tree.py): sections by CUDAMASTER_<SECTION>__<FIELD>, unknown names refused
with the closest valid one, each package reading its own section through the same loader."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from settings import SettingsInvalid, get_harness_settings, get_profiling_settings, load_settings, reset_settings

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch, tmp_path):
    for key in list(os.environ):
        if key.upper().startswith("CUDAMASTER_"):
            monkeypatch.delenv(key)
    monkeypatch.chdir(tmp_path)  # no developer's .env
    reset_settings()
    yield
    reset_settings()


def test_nested_variables_reach_every_section(monkeypatch):
    monkeypatch.setenv("CUDAMASTER_SERVICE__DATABASE_URL", "postgresql+psycopg://u@h/jobs")
    monkeypatch.setenv("CUDAMASTER_HARNESS__SANDBOX_BWRAP", "/opt/bw/bwrap")
    monkeypatch.setenv("CUDAMASTER_AGENT__ROLES__CODER__MODEL", "coder-x")
    monkeypatch.setenv("CUDAMASTER_AGENT__PRICES", '{"coder-x": {"input": 1.5, "output": 3}}')
    monkeypatch.setenv("CUDAMASTER_PROFILING__NCU", "/opt/ncu")
    tree = load_settings()
    assert tree.service.database_url == "postgresql+psycopg://u@h/jobs"
    assert tree.agent.role("coder").model == "coder-x" and tree.agent.role("planner").model == "o4-mini"
    assert tree.agent.price("coder-x").output == 3.0
    # The harness and profiling packages read their section of the same tree.
    assert get_harness_settings().sandbox_bwrap == "/opt/bw/bwrap" and get_harness_settings() is tree.harness
    assert get_profiling_settings().ncu == "/opt/ncu"
    assert get_harness_settings(min_pairs=7).min_pairs == 7 and get_harness_settings().min_pairs == 10  # an override is a copy


def test_dotenv_file_is_read(tmp_path):
    (tmp_path / ".env").write_text("CUDAMASTER_HARNESS__NVCC_ARCH=sm_100\n")
    assert load_settings().harness.nvcc_arch == "sm_100"


@pytest.mark.parametrize(
    ("name", "meant"),
    [
        ("CUDAMASTER_DATABASE_URL", "CUDAMASTER_SERVICE__DATABASE_URL"),  # a flat name from before the tree
        ("CUDAMASTER_SANDBOX_BWRAP", "CUDAMASTER_HARNESS__SANDBOX_BWRAP"),
        ("CUDAMASTER_ROLES__CODER__MODEL", "CUDAMASTER_AGENT__ROLES__CODER__MODEL"),
        ("CUDAMASTER_SERVICE__DATABSE_URL", "CUDAMASTER_SERVICE__DATABASE_URL"),  # misspelt
        ("CUDAMASTER_HARNES__NVCC", "CUDAMASTER_HARNESS__NVCC"),
        ("CUDAMASTER_AGENT__ROLES__CODR__MODEL", "CUDAMASTER_AGENT__ROLES__CODER__MODEL"),
        ("CUDAMASTER_MAX_SOURCE_BYTES", "CUDAMASTER_SERVICE__MAX_SOURCE_BYTES or CUDAMASTER_HARNESS__MAX_SOURCE_BYTES"),
    ],
)
def test_unknown_variable_is_refused_naming_the_closest_setting(monkeypatch, name, meant):
    monkeypatch.setenv(name, "x")
    with pytest.raises(SettingsInvalid) as err:
        load_settings()
    message = str(err.value)
    assert name in message and f"did you mean {meant}?" in message and "\n" not in message


def test_unknown_variable_in_dotenv_is_refused(tmp_path):
    (tmp_path / ".env").write_text("CUDAMASTER_NCU=/opt/ncu\n")
    with pytest.raises(SettingsInvalid, match=r"CUDAMASTER_NCU in \.env; did you mean CUDAMASTER_PROFILING__NCU\?"):
        load_settings()


def test_bad_value_is_one_line_naming_the_variable(monkeypatch):
    monkeypatch.setenv("CUDAMASTER_SERVICE__PORT", "eighty")
    with pytest.raises(SettingsInvalid, match=r"^invalid setting CUDAMASTER_SERVICE__PORT: ") as err:
        load_settings()
    assert "\n" not in str(err.value)


def test_prices_keys_are_free_but_their_fields_are_not_checked_away(monkeypatch):
    # A dict setting's keys are the user's (model names): not "unknown".
    monkeypatch.setenv("CUDAMASTER_AGENT__PRICES__MY_MODEL__INPUT", "2")
    monkeypatch.setenv("CUDAMASTER_AGENT__PRICES__MY_MODEL__OUTPUT", "4")
    assert load_settings().agent.price("my_model").input == 2.0


def _cli(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if not k.upper().startswith("CUDAMASTER_")}
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *args],
        env={**clean, "PYTHONPATH": str(REPO), **env},
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("command", [["resume", "nojob"], ["keys", "list"], ["serve"], ["profile", "classify", "x.csv"]])
def test_cli_refuses_an_old_variable_in_one_line(tmp_path, command):
    r = _cli(*command, env={"CUDAMASTER_DATABASE_URL": f"sqlite:///{tmp_path / 's.db'}"}, cwd=tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    lines = r.stderr.strip().splitlines()
    assert lines == [lines[0]] and "Traceback" not in r.stderr, r.stderr
    assert "CUDAMASTER_DATABASE_URL" in lines[0] and "CUDAMASTER_SERVICE__DATABASE_URL" in lines[0]


def test_bench_and_profiling_import_without_the_service():
    code = (
        "import sys, bench_tasks.harness, bench_tasks.cli, profiling.ncu, profiling.cli; "
        "bad = sorted(m for m in sys.modules if m == 'app' or m.startswith('app.') or m.split('.')[0] in ('fastapi', 'sqlalchemy')); "
        "assert not bad, bad"
    )
    r = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr


def test_checkpoint_store_is_one_url_for_service_and_cli(monkeypatch, tmp_path):
    monkeypatch.setenv("CUDAMASTER_AGENT__STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("CUDAMASTER_SERVICE__DATABASE_URL", f"sqlite:///{tmp_path / 'service.db'}")
    assert load_settings().checkpoint_store() == f"sqlite:///{tmp_path / 'state' / 'checkpoints.db'}"
    monkeypatch.setenv("CUDAMASTER_SERVICE__DATABASE_URL", "postgresql+psycopg://u@h/jobs")
    assert load_settings().checkpoint_store() == "postgresql+psycopg://u@h/jobs"  # beside the jobs by default
    monkeypatch.setenv("CUDAMASTER_CHECKPOINT_URL", "postgresql://u@h/checkpoints")
    assert load_settings().checkpoint_store() == "postgresql://u@h/checkpoints"
