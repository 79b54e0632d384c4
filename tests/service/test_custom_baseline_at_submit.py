"""A custom task whose baseline does not build, or is rejected by the harness's checks, is refused at
submit (fault 3 of issue 10): 422 with the verdict, the first error and the compile log (no host path in
it: issue 30); no job, no stored custom task, no LLM call. Real nvcc in the real sandbox (no GPU needed); the
agent is the FAKE one (tests/service/fake_agent.py), which is never reached for a refused task."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from sqlalchemy import func, select

from app.db.engine import make_engine, make_sessionmaker
from app.db.models import CustomTask, Job

from .conftest import make_key
from .test_api_with_fake_agent import CUSTOM

pytestmark = pytest.mark.timeout(300)
API = "/api/v1"
KERNEL = "__global__ void k(const float* X, float* Y, int N) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < N) Y[i] = X[i]; }\n"


def _stored(db_url: str) -> tuple[int, int]:
    engine = make_engine(db_url)
    try:
        with make_sessionmaker(engine)() as session:
            return session.scalar(select(func.count(Job.id))), session.scalar(select(func.count(CustomTask.id)))
    finally:
        engine.dispose()


@pytest.mark.parametrize(
    ("baseline", "verdict", "says"),
    [
        (
            KERNEL + 'extern "C" void scale(const float* X, float* Y, int N) { k<<<(N + 255) / 256, 256>>>(X, Y N); }\n',
            "compile_error",
            "error",
        ),
        (
            KERNEL + '#include <cstdlib>\nextern "C" void scale(const float* X, float* Y, int N) { system("id"); }\n',
            "rejected",
            "forbidden symbol system",
        ),
        (
            KERNEL + 'extern "C" void scale(const float* X, float* Y, long N) { k<<<1, 1>>>(X, Y, (int)N); }\n',
            "link_error",
            "does not match the expected prototype",
        ),
    ],
    ids=["compile_error", "forbidden_symbol", "wrong_prototype"],
)
def test_a_baseline_that_does_not_build_is_refused_at_submit_with_fake_agent(db_url, server_factory, baseline, verdict, says, tmp_path):
    headers = {"X-API-Key": make_key(db_url)}
    server = server_factory()
    with httpx.Client(base_url=server.url, timeout=120) as client:
        r = client.post(f"{API}/jobs", json={"custom": CUSTOM | {"baseline_cu": baseline}}, headers=headers)
        assert r.status_code == 422, r.text
        [error] = r.json()["detail"]
        assert error["loc"] == ["body", "custom", "baseline_cu"]
        assert f"baseline_cu: {verdict}:" in error["msg"] and says in error["msg"], error["msg"]
        assert "compile_log" in error["ctx"]
        if verdict == "compile_error":
            assert "custom_baseline.cu(2): error" in error["ctx"]["compile_log"]
        # No host path in what the client sees (issue 30): not the scratch directory, nvcc's temp files or a home.
        for host_path in ("/tmp/", "cm-build-", "tmpxft_", str(Path.home()), str(tmp_path)):
            assert host_path not in r.text, (host_path, r.text)
        assert client.get(f"{API}/jobs", headers=headers).json()["total"] == 0
    assert _stored(db_url) == (0, 0)  # nothing stored but the refusal


def test_a_baseline_that_builds_is_accepted_with_fake_agent(db_url, server_factory):
    headers = {"X-API-Key": make_key(db_url)}
    server = server_factory()
    good = KERNEL + 'extern "C" void scale(const float* X, float* Y, int N) { k<<<(N + 255) / 256, 256>>>(X, Y, N); }\n'
    with httpx.Client(base_url=server.url, timeout=120) as client:
        r = client.post(f"{API}/jobs", json={"custom": CUSTOM | {"baseline_cu": good}}, headers=headers)
    assert r.status_code == 201, r.text
    assert _stored(db_url) == (1, 1)
