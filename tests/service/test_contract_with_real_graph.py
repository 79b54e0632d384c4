"""The contract (graph.contract) end to end in one process, on SQLite and PostgreSQL: the service's
REAL runner runs the REAL graph (LLM answers from the scripted OpenAI-compatible server or from a
person over HTTP, real nvcc compiles, FAKE GPU results and a FAKE profiler that replays a saved ncu
report through the real parser, classifier and filter: gpu.fake.FakeGpuEvaluator), the REAL store
keeps what the graph emitted, and the API serves it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.db.engine import make_engine, make_sessionmaker
from app.db.models import JobEvent, Profile
from app.main import create_app
from app.schemas import JobDetail, JobSubmit
from graph.contract import EVENT_TYPES, parse_event
from profiling.classify import Bottleneck
from profiling.filter import CLASS_METRICS
from settings import ServiceSettings
from tests.support import kernels as k
from tests.support.machine_env import clear_settings_env
from tests.support.openai_stub import Reply
from tests.support.workers import compile_cache

from .conftest import make_key, wait_status

pytestmark = pytest.mark.timeout(300)

API = "/api/v1"
SAXPY_NCU = Path(__file__).resolve().parents[1] / "fixtures" / "ncu" / "synthetic_saxpy_raw.csv"
MODELS = {"planner": "planner-model", "coder": "coder-model", "compiler": "compiler-model", "debugger": "debugger-model"}


@pytest.fixture(scope="module")
def harness_cache(tmp_path_factory) -> Path:
    # The run's one nvcc object cache (for all xdist workers and test modules): the same source compiles once.
    return compile_cache(tmp_path_factory)


@pytest.fixture
def service(db_url, tmp_path, llm, harness_cache, monkeypatch):
    """(client, headers, db_url): the service with the real agent and a FAKE GPU, in this process."""
    from gpu.fake import FakeGpuEvaluator
    from settings import HarnessSettings

    clear_settings_env(monkeypatch)
    monkeypatch.setenv("CUDAMASTER_AGENT__BASE_URL", llm.base_url)
    monkeypatch.setenv("CUDAMASTER_AGENT__API_KEY", "test-key")
    monkeypatch.setenv("CUDAMASTER_AGENT__STATE_DIR", str(tmp_path / "agent-state"))
    monkeypatch.setenv("CUDAMASTER_AGENT__PRICES", json.dumps({m: {"input": 1.0, "output": 4.0} for m in MODELS.values()}))
    for role, model in MODELS.items():
        monkeypatch.setenv(f"CUDAMASTER_AGENT__ROLES__{role.upper()}__MODEL", model)
    headers = {"X-API-Key": make_key(db_url)}
    evaluator = FakeGpuEvaluator(HarnessSettings(cache_dir=harness_cache), ncu_report=SAXPY_NCU)
    app = create_app(ServiceSettings(database_url=db_url, poll_seconds=0.2, lease_seconds=30), evaluator=evaluator)
    with TestClient(app) as client:
        yield client, headers, db_url


def _rows(db_url: str, model, job_id: str) -> list:
    engine = make_engine(db_url)
    try:
        with make_sessionmaker(engine)() as session:
            if model is Profile:
                from app.db.models import Attempt

                return list(session.query(Profile).join(Attempt).filter(Attempt.job_id == job_id))
            return list(session.query(model).filter(model.job_id == job_id).order_by(model.id))
    finally:
        engine.dispose()


def _answer(client, headers, url: str, role: str, text: str, *, name_it: bool = True) -> dict:
    """Answer the question `role` is waiting on; `name_it`: send its question_id too."""
    job = wait_status(client, url, headers, {"waiting_for_input"}, timeout=120)
    question = job["question"]["question"]
    assert question["role"] == role, job["message"]
    body = {"answer": text} | ({"question_id": question["question_id"]} if name_it else {})
    r = client.post(f"{url}/answer", json=body, headers=headers)
    assert r.status_code == 200, r.text
    return question


def test_every_event_the_graph_emits_is_stored_and_served_and_the_profile_is_kept_with_fake_gpu(service):
    client, headers, db_url = service
    r = client.post(f"{API}/jobs", json={"task": "vector_add", "rounds": 1, "debug": 0, "manual": True}, headers=headers)
    assert r.status_code == 201, r.text
    url = f"{API}/jobs/{r.json()['id']}"
    _answer(client, headers, url, "planner", k.plan("Grid"))
    coder = _answer(client, headers, url, "coder", k.reply(k.fast_kernel(1.8)))
    job = wait_status(client, url, headers, {"finished", "failed", "no_correct_kernel"}, timeout=120)
    assert job["status"] == "finished", job["message"]
    JobDetail.model_validate(job)  # what the API served is the contract's shape

    # Fault 11: the profile the planner would see next is stored on the attempt and served with it.
    [attempt] = job["attempts"]
    profile = attempt["profile"]
    assert profile["bottleneck_class"] == "memory_bandwidth" and profile["mode"] == "filtered"
    assert profile["text"].startswith("Bottleneck: memory bandwidth bound")
    assert profile["metrics"]["gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"] == pytest.approx(70.72)
    assert set(profile["metrics"]) == set(CLASS_METRICS[Bottleneck.memory_bandwidth])  # the class's metrics, as shown
    assert 0 < profile["tokens"] < len(profile["text"])
    assert [p.bottleneck_class for p in _rows(db_url, Profile, job["id"])] == ["memory_bandwidth"]

    # Every event type the graph can emit went through the contract's union into the store, and back out.
    events = _rows(db_url, JobEvent, job["id"])
    assert {e.type for e in events} == set(EVENT_TYPES)
    for e in events:
        assert parse_event(e.payload).type == e.type
    [interrupt] = [e.payload for e in events if e.type == "interrupt" and e.payload["question"]["role"] == "coder"]
    assert interrupt["question"]["question_id"] == coder["question_id"]
    [stored] = [e.payload for e in events if e.type == "profile" and not e.payload["sent"] and e.payload["of"] != "baseline"]
    assert stored["attempt_id"] == attempt["attempt_key"] and stored["bottleneck_class"] == "memory_bandwidth"


def test_a_cancelled_and_resumed_job_never_feeds_an_answer_to_a_later_question_with_fake_gpu(service):
    client, headers, _ = service
    r = client.post(f"{API}/jobs", json={"task": "vector_add", "rounds": 1, "debug": 1, "manual": True}, headers=headers)
    url = f"{API}/jobs/{r.json()['id']}"
    _answer(client, headers, url, "planner", k.plan("Grid"), name_it=False)  # the answer as clients send it today
    waiting = wait_status(client, url, headers, {"waiting_for_input"}, timeout=120)
    coder = waiting["question"]["question"]
    assert coder["role"] == "coder"

    r = client.post(f"{url}/cancel", headers=headers)
    assert r.status_code == 200 and r.json()["id"] == url.rsplit("/", 1)[1], r.text
    wait_status(client, url, headers, {"cancelled"})
    r = client.post(f"{url}/resume", headers=headers)
    assert r.status_code == 200 and r.json()["status"] == "queued", r.text
    resumed = wait_status(client, url, headers, {"waiting_for_input", "finished", "no_correct_kernel", "failed"}, timeout=120)
    # Still the coder's question: the planner's answer was not fed to the coder (nor anything to a debugger).
    assert resumed["status"] == "waiting_for_input", (resumed["message"], resumed["attempts"])
    assert resumed["question"]["question"]["question_id"] == coder["question_id"]
    assert resumed["attempts"] == [] and [c["role"] for c in resumed["llm_calls"]] == ["planner"]
    planner_id = resumed["llm_calls"][0]["call_key"]
    stale = client.post(f"{url}/answer", json={"answer": "x", "question_id": planner_id}, headers=headers)
    assert stale.status_code == 409 and coder["question_id"] in stale.json()["detail"]  # naming the old question: refused

    _answer(client, headers, url, "coder", k.reply(k.fast_kernel(1.6)))
    done = wait_status(client, url, headers, {"finished", "no_correct_kernel", "failed"}, timeout=120)
    assert done["status"] == "finished", done["message"]
    assert [(a["role"], a["verdict"], a["strategy"].splitlines()[0]) for a in done["attempts"]] == [("coder", "ok", "Grid")]


def test_a_job_stops_at_its_spending_cap_and_says_so_with_fake_gpu(service, llm):
    client, headers, _ = service
    llm.add(MODELS["planner"], *[Reply(k.plan(f"Plan {i}")) for i in range(3)])
    llm.add(MODELS["coder"], *[Reply(k.reply(k.fast_kernel(1.5))) for _ in range(3)])
    r = client.post(f"{API}/jobs", json={"task": "vector_add", "rounds": 3, "debug": 0, "spending_cap": {"tokens": 1500}}, headers=headers)
    assert r.status_code == 201, r.text
    assert r.json()["settings"]["spending_cap"] == {"usd": None, "tokens": 1500}
    job = wait_status(client, f"{API}/jobs/{r.json()['id']}", headers, {"finished", "no_correct_kernel", "failed"}, timeout=120)
    assert job["status"] == "finished" and job["stop_reason"] == "spending_cap", job["message"]
    assert "spending cap" in job["message"] and job["best_score"] == 1.5
    assert job["totals"]["input_tokens"] + job["totals"]["output_tokens"] == 300 and job["totals"]["llm_calls_count"] == 2


def test_a_dollar_cap_on_an_unpriced_model_is_refused_at_submit_with_fake_gpu(service):
    client, headers, _ = service
    r = client.post(
        f"{API}/jobs", json={"task": "vector_add", "models": {"coder": "no-price-model"}, "spending_cap": {"usd": 1}}, headers=headers
    )
    assert r.status_code == 422 and "'no-price-model' has no price" in r.json()["detail"][0]["msg"]
    assert r.json()["detail"][0]["loc"] == ["body", "spending_cap"]
    ok = client.post(
        f"{API}/jobs",
        json={
            "task": "vector_add",
            "rounds": 1,
            "debug": 0,
            "models": {"coder": "no-price-model"},
            "spending_cap": {"usd": 1, "tokens": 10},
        },
        headers=headers,
    )
    assert ok.status_code == 201, ok.text  # a token cap backs the dollar cap up


@pytest.mark.parametrize("cap", [{}, {"usd": 0}, {"usd": -2}, {"tokens": 0}, {"usd": "1e309"}, {"tokens": 1.5}, {"usd": 1, "x": 1}])
def test_bad_spending_caps_are_refused_by_the_submission_schema(cap):
    with pytest.raises(ValueError, match="spending_cap"):
        JobSubmit.model_validate({"task": "vector_add", "spending_cap": cap})
