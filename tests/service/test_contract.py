"""Drift between the agent, the service and the test doubles fails here: the store takes contract events
only (graph.contract.Event), the FAKE agent's events are the contract's, and a submission is a JobSpec."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from app.agent import JobRun
from app.auth import create_key
from app.db.engine import make_engine, make_sessionmaker
from app.db.migrate import upgrade
from app.db.models import Attempt, JobEvent
from app.schemas import JobSubmit
from app.store import jobs as store
from app.store.events import record_event, summary
from graph.contract import (
    EVENT_TYPES,
    Answer,
    AttemptEvent,
    JobSpec,
    Outcome,
    parse_event,
)

from .fake_agent import fake_run_job


@pytest.fixture
def session(db_url):
    upgrade(db_url)
    engine = make_engine(db_url)
    with make_sessionmaker(engine)() as s:
        yield s
    engine.dispose()


def _fake_run(job_id: str, spec: JobSpec, events: list, answer: Answer | None = None) -> Outcome:
    run = JobRun(
        job_id=job_id,
        spec=spec,
        resume=False,
        answer=answer,
        evaluator=None,
        checkpoint_url="",
        on_event=events.append,
        should_stop=lambda: False,
    )
    return fake_run_job(run)


def test_the_fake_agents_events_are_contract_events_the_store_takes(session, tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_AGENT_STATE_DIR", str(tmp_path))
    monkeypatch.setenv("FAKE_AGENT_STEP_SECONDS", "0")
    key = create_key(session, "drift")[0]
    spec = JobSpec(task="vector_add", precision="fp32", rounds=1, manual=True)
    job = store.create_job(session, task="vector_add", precision="fp32", settings=spec.model_dump(mode="json"), api_key_id=key.id)
    events: list = []
    waiting = _fake_run(job.id, spec, events)
    question = waiting.question
    assert waiting.status == "waiting_for_input" and question is not None
    assert _fake_run(job.id, spec, events, Answer(question_id="another question", text="tiling")).status == "waiting_for_input"
    done = _fake_run(job.id, spec, events, Answer(question_id=question.question_id, text="tiling"))
    assert done.status == "finished"
    assert {e.type for e in events} == set(EVENT_TYPES) - {"profile"}  # the fake agent sends profiles inside attempts
    for e in events:
        assert parse_event(e.model_dump(mode="json")) == e
        record_event(session, job.id, e)
    stored = session.query(JobEvent).filter(JobEvent.job_id == job.id).all()
    assert all(parse_event(row.payload).type == row.type for row in stored)
    [attempt] = session.query(Attempt).filter(Attempt.job_id == job.id).all()
    assert attempt.strategy == "tiling" and attempt.profile.bottleneck_class == "memory_bandwidth"


@pytest.mark.parametrize(
    "bad",
    [
        {"type": "attempt", "attempt_id": "a", "round": 1, "verdict": "ok", "surprise": 1},  # a field the contract lacks
        {"type": "attempt", "round": 1, "verdict": "ok"},  # no attempt_id
        {"type": "llm_call", "call_id": "c", "role": "coder", "model": "m", "input_tokens": -1},
        {"type": "interrupt", "question": "which strategy?"},  # a question without its id
        {"type": "progress", "node": "plan"},  # not an event type
    ],
)
def test_the_store_refuses_what_is_not_a_contract_event(session, bad):
    key = create_key(session, "drift")[0]
    job = store.create_job(session, task="vector_add", precision="fp32", settings={}, api_key_id=key.id)
    with pytest.raises(ValidationError):
        record_event(session, job.id, {"job_id": job.id, **bad})
    session.rollback()
    assert session.query(JobEvent).filter(JobEvent.job_id == job.id).count() == 0


def test_an_event_of_another_job_is_refused(session):
    key = create_key(session, "drift")[0]
    job = store.create_job(session, task="vector_add", precision="fp32", settings={}, api_key_id=key.id)
    event = AttemptEvent(job_id="job_other", attempt_id="job_other:r1:d0", round=1, verdict="ok")
    with pytest.raises(ValueError, match="job_other"):
        record_event(session, job.id, event)


def test_the_event_log_keeps_valid_light_events():
    event = AttemptEvent(
        job_id="j",
        attempt_id="j:r1:d0",
        round=1,
        verdict="ok",
        source="__global__ void k() {}",
        evaluation={"rows": [{"params": {"N": 1}}]},
        compile_log="ptxas info",
    )
    light = parse_event(summary(event))
    assert (light.source, light.evaluation, light.compile_log) == ("", None, "")
    assert light.model_dump(exclude={"source", "evaluation", "compile_log"}) == event.model_dump(
        exclude={"source", "evaluation", "compile_log"}
    )


def test_a_submission_is_a_job_spec():
    body = JobSubmit.model_validate({"task": "vector_add", "rounds": 2, "models": {"*": "m"}, "spending_cap": {"tokens": 9}})
    spec = body.agent_spec("vector_add")
    assert isinstance(spec, JobSpec) and spec.spending_cap is not None and spec.spending_cap.tokens == 9
    # every agent setting a submission carries is a JobSpec field of the same name
    assert set(JobSubmit.model_fields) - {"task", "custom", "pytorch"} <= set(JobSpec.model_fields)
    assert {k: v for k, v in spec.model_dump().items() if k in JobSubmit.model_fields and k != "task"} == body.model_dump(
        exclude={"task", "custom", "pytorch"}
    )
