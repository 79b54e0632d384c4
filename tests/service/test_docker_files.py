"""The deployment files, checked without a Docker engine (none runs on the CPU machines or in CI).

docker/Dockerfile's COPY set is built into a plain (non-editable) wheel, installed on its own, and its
CMD is run with its ENV from outside the source tree: a folder missing from COPY, package data missing
from the wheel, or an ENV the settings do not know fails here. What this cannot check: the CUDA base
image and its apt packages (the image itself has not been built).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
import yaml

from bench_tasks import task_names
from gpu.ray import RaySettings
from settings.tree import unknown_settings

from .conftest import serve_on_free_port

REPO = Path(__file__).resolve().parents[2]
DOCKERFILE = REPO / "docker" / "Dockerfile"
COMPOSE = REPO / "docker" / "docker-compose.yml"
RAY_COMPOSE = REPO / "docker" / "docker-compose.ray.yml"


def _instructions() -> list[tuple[str, str]]:
    text = re.sub(r"\\\n", " ", DOCKERFILE.read_text())
    rows = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            rows.append((word.upper(), rest.strip()))
    return rows


def _dockerfile_env() -> dict[str, str]:
    env = {}
    for word, rest in _instructions():
        if word == "ENV":
            env |= dict(item.split("=", 1) for item in shlex.split(rest))
    return env


def test_every_cudamaster_variable_in_the_deployment_files_is_a_setting():
    # The service refuses unknown CUDAMASTER_* variables at start: a misspelt one here would stop the container.
    compose = yaml.safe_load(COMPOSE.read_text())
    named = set(_dockerfile_env()) | set(compose["services"]["service"]["environment"])
    ours = {n for n in named if n.startswith("CUDAMASTER_")}
    assert ours, "no CUDAMASTER_ variables found: the parser is broken"
    assert not unknown_settings(dict.fromkeys(ours, "")), f"not settings: {unknown_settings(dict.fromkeys(ours, ''))}"


def test_every_cudamaster_variable_of_the_ray_compose_file_is_a_setting():
    compose = yaml.safe_load(RAY_COMPOSE.read_text())
    named = {n for service in compose["services"].values() for n in service.get("environment", {})}
    ours = {n for n in named if n.startswith("CUDAMASTER_")}
    assert "CUDAMASTER_RAY__ADDRESS" in ours
    assert not unknown_settings(dict.fromkeys(ours, "")), f"not settings: {unknown_settings(dict.fromkeys(ours, ''))}"
    RaySettings(
        **{
            n.removeprefix("CUDAMASTER_RAY__").lower(): v
            for n, v in compose["services"]["service"]["environment"].items()
            if n.startswith("CUDAMASTER_RAY__")
        }
    )  # valid values too


def test_ray_compose_wires_the_service_head_and_gpu_worker_together():
    compose = yaml.safe_load(RAY_COMPOSE.read_text())
    services = compose["services"]
    head, worker, service = services["ray-head"], services["gpu-worker"], services["service"]
    for s in (head, worker, service):  # one image with the ray extra: same Python, Ray and code everywhere
        assert (RAY_COMPOSE.parent / s["build"]["context"] / s["build"]["dockerfile"]).resolve() == DOCKERFILE
        assert s["build"]["args"]["EXTRAS"] == "[ray]"
    assert "ARG EXTRAS" in DOCKERFILE.read_text() and 'pip install ".${EXTRAS}"' in DOCKERFILE.read_text()
    port = next(a.split("=")[1] for a in head["command"] if a.startswith("--port="))
    assert service["environment"]["CUDAMASTER_RAY__ADDRESS"] == f"ray-head:{port}"
    assert f"--address=ray-head:{port}" in worker["command"] and "--head" in head["command"]
    assert "--num-gpus=0" in head["command"]  # GPUs come from the GPU workers only
    assert worker["deploy"]["resources"]["reservations"]["devices"][0]["capabilities"] == ["gpu"]
    assert service["environment"]["CUDAMASTER_SERVICE__DATABASE_URL"].startswith("postgresql+psycopg://")
    assert "@postgres:" in service["environment"]["CUDAMASTER_SERVICE__DATABASE_URL"]


def test_compose_builds_the_dockerfile_and_points_the_service_at_its_postgres():
    compose = yaml.safe_load(COMPOSE.read_text())
    service = compose["services"]["service"]
    assert (COMPOSE.parent / service["build"]["context"] / service["build"]["dockerfile"]).resolve() == DOCKERFILE
    url = service["environment"]["CUDAMASTER_SERVICE__DATABASE_URL"]
    assert url.startswith("postgresql+psycopg://") and "@postgres:" in url
    assert service["depends_on"]["postgres"]["condition"] == "service_healthy"


@pytest.mark.slow
def test_the_image_contents_install_as_a_wheel_and_its_cmd_serves(tmp_path):
    # 1. the build context, exactly as the COPY lines lay it out
    src = tmp_path / "src"
    src.mkdir()
    copies = [shlex.split(rest) for word, rest in _instructions() if word == "COPY"]
    assert copies
    for parts in copies:
        *sources, dest = parts
        for s in sources:
            target = src / dest / Path(s).name if dest.endswith("/") or len(sources) > 1 or dest == "./" else src / dest
            if (REPO / s).is_dir():
                shutil.copytree(REPO / s, target, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(REPO / s, target)
    # 2. `pip install .` as the image does, but into a folder of its own (no editable install)
    wheels, site = tmp_path / "wheels", tmp_path / "site"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run([*pip, "wheel", "--no-deps", "-w", str(wheels), str(src)], check=True, timeout=600)
    subprocess.run([*pip, "install", "--no-deps", "--target", str(site), *map(str, wheels.glob("*.whl"))], check=True, timeout=300)
    entry = next(site.glob("cudamaster-*.dist-info")) / "entry_points.txt"
    cmd = next(json.loads(rest) for word, rest in _instructions() if word == "CMD")
    assert f"{cmd[0]} = app.cli:main" in entry.read_text()
    # every file the harness needs at run time is in the wheel (the runtime's sources, each task's files)
    shipped = subprocess.run(["git", "ls-files", "bench_tasks"], cwd=REPO, capture_output=True, text=True, check=True).stdout.split()
    missing = [f for f in shipped if not (site / f).is_file()]
    assert shipped and not missing, f"not in the wheel: {missing}"

    # 3. the image's ENV, with /data in a temporary folder, and the installed copy first on the path
    data = tmp_path / "data"
    data.mkdir()
    env = {k: v.replace("/data", str(data)) for k, v in _dockerfile_env().items() if k.startswith("CUDAMASTER_")}
    env = {**os.environ, **env, "PYTHONPATH": str(site)}
    # The developer's editable install would fill in whatever the wheel lacks: drop its finder.
    isolate = "import sys; sys.meta_path[:] = [f for f in sys.meta_path if '__editable__' not in getattr(f, '__module__', '')]; "
    run_cli = [sys.executable, "-c", isolate + "from app.cli import main; sys.argv[0] = 'cudamaster'; main()"]
    packages = ["settings", "app", "graph", "gpu", "bench_tasks", "profiling", "migrations"]
    where = subprocess.run(
        [sys.executable, "-c", isolate + "import importlib\nfor p in sys.argv[1:]: print(importlib.import_module(p).__file__)", *packages],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert where.returncode == 0, where.stderr[-2000:]
    assert all(line.startswith(str(site)) for line in where.stdout.split()), f"not the installed copy: {where.stdout}"
    key = (
        subprocess.run(
            [*run_cli, "keys", "create", "--name", "docker-test"],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        )
        .stdout.strip()
        .splitlines()[-1]
    )

    # 4. the CMD, then the API on the port the image exposes through its settings (CUDAMASTER_SERVICE__PORT)
    log_path = tmp_path / "serve.log"
    server, url = serve_on_free_port(
        lambda port: ([*run_cli, *cmd[1:]], env | {"CUDAMASTER_SERVICE__PORT": str(port)}), log_path, tmp_path, 90
    )
    base = f"{url}/api/v1"
    try:
        tasks = httpx.get(f"{base}/tasks", headers={"X-API-Key": key}, timeout=10)
        assert tasks.status_code == 200, tasks.text
        assert sorted(t["name"] for t in tasks.json()) == sorted(task_names())
        assert (data / "service.db").exists()  # CUDAMASTER_SERVICE__DATABASE_URL from the image's ENV
    finally:
        server.send_signal(signal.SIGTERM)  # the image's STOPSIGNAL: drain and exit
        try:
            server.wait(timeout=60)
        finally:
            if server.poll() is None:
                server.kill()
    # uvicorn shuts down cleanly, then re-raises the signal (so the container reports 143)
    assert server.returncode in (0, -signal.SIGTERM), (tmp_path / "serve.log").read_text()[-3000:]
    assert "Application shutdown complete" in (tmp_path / "serve.log").read_text()
