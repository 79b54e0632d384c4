"""Attacks submitted through the real API: a custom task whose baseline is an attack, and an LLM whose kernel
is one. The service runs the real agent and the real harness in the real sandbox; the GPU check is FAKE
(tests/service/graph_app.py: create_harness_without_gpu_app), so drivers start and their constructors run."""

from __future__ import annotations

import json
import select
import socket
import uuid

import httpx
import pytest

from tests.bench.sandbox_support import ATTACKS, bwrap_works, scratch_root
from tests.support import kernels as k

from .conftest import make_key, wait_status
from .test_service_with_graph import MODELS, graph_env

pytestmark = [pytest.mark.timeout(400), pytest.mark.slow]

API = "/api/v1"
SECRET = "sk-test-SECRET-" + uuid.uuid4().hex
PROTO = 'extern "C" void scale(const float* X, float* Y, int N)'
ARGS = {
    "X": {"role": "input", "length": "N", "draw": "uniform(-1, 1)"},
    "Y": {"role": "output", "length": "N"},
    "N": {"role": "scalar", "value": "N"},
}

# Runs when the driver loads: writes outside its scratch directory, reads the data directory's secret,
# connects to the database and the service, and dumps its environment into its output.
CONSTRUCTOR = """
struct cm_sockaddr_in { unsigned short family; unsigned short port; unsigned int addr; char zero[8]; };
static long cm_connect(unsigned short port) {
  long fd = cm_sys(SYS_SOCKET, 2, 1, 0);
  if (fd < 0) return fd;
  cm_sockaddr_in a = {2, (unsigned short)((port >> 8) | (port << 8)), 0x0100007f, {0}};
  return cm_sys(SYS_CONNECT, fd, (long)&a, sizeof a);
}
__attribute__((constructor)) static void cm_attack(int argc, char** argv, char** envp) {
  cm_report("marker", cm_create("@MARKER@", "pwned"));
  long fd = cm_sys(SYS_OPEN, (long)"@SECRET_FILE@", CM_O_RDONLY, 0);
  cm_report("open-secret", fd);
  if (fd >= 0) { char b[200]; long n = cm_sys(SYS_READ, fd, (long)b, 199); b[n > 0 ? n : 0] = 0; cm_say(b); }
  cm_report("connect-postgres", cm_connect(5432));
  cm_report("connect-service", cm_connect(@PORT@));
  for (char** e = envp; e && *e; ++e) { cm_say("ENV "); cm_say(*e); cm_say("\\n"); }
}
"""
SCALE = """
__global__ void cm_scale(const float* X, float* Y, int N) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < N) Y[i] = 2.0f * X[i]; }
extern "C" void @ENTRY@(const float* X, float* Y, int N) { cm_scale<<<(N + 255) / 256, 256>>>(X, Y, N); }
"""


def attack(entry: str, **subs: object) -> str:
    text = (ATTACKS / "kit.h").read_text() + CONSTRUCTOR + SCALE.replace("@ENTRY@", entry)
    for key, value in subs.items():
        text = text.replace(f"@{key}@", str(value))
    return text


def _everything(client: httpx.Client, job_id: str, headers: dict) -> str:
    job = client.get(f"{API}/jobs/{job_id}", headers=headers).text
    events = client.get(f"{API}/jobs/{job_id}/events", headers=headers, timeout=60).text
    return job + events


def _start(server_factory, tmp_path, llm, tmp_path_factory, root):
    env = graph_env(tmp_path, llm, tmp_path_factory) | {"CUDAMASTER_HARNESS__SCRATCH_ROOT": str(root), "CUDAMASTER_AGENT__API_KEY": SECRET}
    return server_factory(factory="tests.service.graph_app:create_harness_without_gpu_app", **env)


def test_attacks_through_the_api_leave_nothing_and_leak_nothing_with_fake_llm(
    db_url, server_factory, tmp_path, llm, tmp_path_factory, harness_settings
):
    data = tmp_path / "data"
    data.mkdir()
    (data / "secret.env").write_text(f"CUDAMASTER_AGENT__API_KEY={SECRET}\n")
    marker = tmp_path / "pwned"
    with scratch_root() as root, socket.create_server(("127.0.0.1", 0)) as canary:
        if not bwrap_works(harness_settings.model_copy(update={"scratch_root": root}))[0]:
            pytest.skip("no working bubblewrap here")
        subs = dict(MARKER=marker, SECRET_FILE=data / "secret.env", PORT=canary.getsockname()[1])
        llm.add(MODELS["planner"], k.plan("Grid"))
        llm.add(MODELS["coder"], k.reply(attack("scale_optimized", **subs)))
        llm.add(MODELS["debugger"], k.reply(attack("scale_optimized", **subs)))
        headers = {"X-API-Key": make_key(db_url)}
        server = _start(server_factory, tmp_path, llm, tmp_path_factory, root)
        custom = {"name": "scale", "prototype": PROTO, "args": ARGS, "sizes": [{"N": 1024}], "baseline_cu": attack("scale", **subs)}
        with httpx.Client(base_url=server.url, timeout=30) as client:
            r = client.post(f"{API}/jobs", json={"custom": custom, "rounds": 1, "debug": 1, "profile_mode": "none"}, headers=headers)
            assert r.status_code == 201, r.text
            job_id = r.json()["id"]
            job = wait_status(client, f"{API}/jobs/{job_id}", headers, {"finished", "no_correct_kernel", "failed"}, timeout=360)
            seen = _everything(client, job_id, headers)
            health = client.get(f"{API}/health").json()
        assert not select.select([canary], [], [], 0.5)[0], "the service's port received a connection"
    prompts = " ".join(json.dumps(req.body) for req in llm.requests)
    # The attacks ran (their report reached the debugger's prompt through the driver's output)...
    assert "ATTACK marker rc=-2" in prompts and "ATTACK open-secret rc=-2" in prompts, prompts[-3000:]
    assert "ATTACK connect-postgres rc=-1" in prompts and "ENV PATH=" in prompts
    # ...and did no harm: no file, no connection, no secret in the API, the events, the prompts or the log.
    assert not marker.exists()
    log = server.log.read_text()
    for text in (seen, prompts, log):
        assert SECRET not in text and "CUDAMASTER_SERVICE__DATABASE_URL" not in text and "ENV CUDAMASTER" not in text
    assert job["status"] in ("no_correct_kernel", "finished", "failed"), job["message"]
    assert health["status"] == "ok" and health["sandbox"].startswith("bwrap")


def test_without_a_sandbox_the_service_says_so_and_refuses_kernels_with_fake_llm(db_url, server_factory, tmp_path, llm, tmp_path_factory):
    llm.add(MODELS["planner"], k.plan("Grid"))
    llm.add(MODELS["coder"], k.reply(k.fast_kernel()))
    headers = {"X-API-Key": make_key(db_url)}
    env = graph_env(tmp_path, llm, tmp_path_factory) | {"CUDAMASTER_HARNESS__SANDBOX_BWRAP": "/nonexistent/bwrap"}
    server = server_factory(factory="tests.service.graph_app:create_harness_without_gpu_app", **env)
    with httpx.Client(base_url=server.url, timeout=30) as client:
        health = client.get(f"{API}/health").json()
        job_id = client.post(
            f"{API}/jobs", json={"task": "vector_add", "rounds": 1, "debug": 0, "profile_mode": "none"}, headers=headers
        ).json()["id"]
        job = wait_status(client, f"{API}/jobs/{job_id}", headers, {"finished", "no_correct_kernel", "failed"}, timeout=120)
    assert health["sandbox"].startswith("unavailable: bubblewrap not found") and "apt-get install bubblewrap" in health["sandbox"]
    assert "untrusted kernels will be REFUSED" in server.log.read_text()
    assert job["status"] == "failed" and "bubblewrap not found" in job["message"], job["message"]


def test_a_custom_baseline_including_a_server_file_gets_no_such_file_with_fake_llm(
    db_url, server_factory, tmp_path, llm, tmp_path_factory, harness_settings
):
    data = tmp_path / "data"
    data.mkdir()
    (data / "secret.env").write_text(f"CUDAMASTER_AGENT__API_KEY={SECRET}\n")
    baseline = f'#include "{data / "secret.env"}"\n' + 'extern "C" void scale(const float* X, float* Y, int N) { }\n'
    with scratch_root() as root:
        if not bwrap_works(harness_settings.model_copy(update={"scratch_root": root}))[0]:
            pytest.skip("no working bubblewrap here")
        llm.add(MODELS["planner"], k.plan("Grid"))
        llm.add(MODELS["coder"], k.reply(SCALE.replace("@ENTRY@", "scale_optimized")))
        headers = {"X-API-Key": make_key(db_url)}
        server = _start(server_factory, tmp_path, llm, tmp_path_factory, root)
        custom = {"name": "scale", "prototype": PROTO, "args": ARGS, "sizes": [{"N": 1024}], "baseline_cu": baseline}
        with httpx.Client(base_url=server.url, timeout=120) as client:
            # The baseline is compiled at submit, in the sandbox: refused with the compiler's log, nothing queued.
            r = client.post(f"{API}/jobs", json={"custom": custom, "rounds": 1, "debug": 0, "profile_mode": "none"}, headers=headers)
            assert r.status_code == 422, r.text
            seen = r.text
            assert client.get(f"{API}/jobs", headers=headers).json()["total"] == 0
    assert "baseline_cu: compile_error" in seen and "No such file or directory" in seen, seen[-3000:]
    prompts = " ".join(json.dumps(req.body) for req in llm.requests)
    for text in (seen, prompts, server.log.read_text()):
        assert SECRET not in text
