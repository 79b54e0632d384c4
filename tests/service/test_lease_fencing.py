"""Lease fencing (issue 30, defect 6): a runner that stalled past its lease and woke after another runner took
its job over writes nothing for the job: no event (a `finished` on a job another runner is running), no LLM
call record, no checkpoint, no settle. Two runners' leases on one database (SQLite and PostgreSQL), the stall
made by expiring runner A's lease in the database."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import func, select

from app.agent import fenced
from app.db.models import RUNNING, Job, JobEvent, LlmCall
from app.db.types import utcnow
from app.store import jobs as store
from app.store import leases
from app.store.events import record_event
from graph.contract import FinishedEvent, LlmCallEvent


def _claim(sessions, holder: str) -> leases.Claim:
    with sessions() as session:
        [claim] = leases.claim_jobs(session, holder, 60, 10)
    return claim


def _taken_over(sessions) -> tuple[leases.Claim, leases.Claim]:
    """Runner A claims a job, stalls past its lease; runner B claims it."""
    with sessions() as session:
        job_id = store.create_job(session, task="vector_add", precision="fp32", settings={"task": "vector_add"}, api_key_id=None).id
    a = _claim(sessions, "runner-a")
    with sessions() as session:
        session.get(Job, job_id).lease_expires_at = utcnow() - timedelta(seconds=1)  # A stalled past its lease
        session.commit()
    b = _claim(sessions, "runner-a")  # the same runner id, restarted: a new generation all the same
    assert a.job_id == b.job_id == job_id and a.lease != b.lease
    return a, b


def _fence(claim: leases.Claim):
    return lambda session: leases.hold(session, claim.job_id, claim.lease)


def _call(job_id: str, status: str) -> LlmCallEvent:
    return LlmCallEvent(
        job_id=job_id, node="ledger", call_id=f"{job_id}:llm0", role="coder", model="m", status=status, send_id="s1", input_tokens=10
    )


def test_the_old_runners_writes_are_refused_after_a_takeover(sessions):
    old, new = _taken_over(sessions)
    job_id = old.job_id
    with sessions() as session:
        with pytest.raises(leases.LeaseLost, match="taken over"):
            record_event(session, job_id, _call(job_id, "sent"), fence=_fence(old))  # the ledger refuses its call
        with pytest.raises(leases.LeaseLost):
            record_event(session, job_id, FinishedEvent(job_id=job_id, status="stopped", message="old run"), fence=_fence(old))
        with pytest.raises(leases.LeaseLost):
            leases.check(session, job_id, old.lease)  # before a checkpoint write
        assert leases.settle(session, job_id, old.lease, "stopped", "old run", draining=False) is None
        assert leases.renew(session, job_id, old.lease, 60) == (False, False)
    with sessions() as session:
        assert session.scalar(select(func.count(JobEvent.id)).where(JobEvent.job_id == job_id)) == 0  # no stray event
        assert session.scalar(select(func.count(LlmCall.id)).where(LlmCall.job_id == job_id)) == 0
        job = session.get(Job, job_id)
        assert job.status == RUNNING and job.lease_holder == new.lease  # the new runner's job, untouched
        assert record_event(session, job_id, _call(job_id, "sent"), fence=_fence(new))  # the holder's writes go through


def test_a_checkpoint_write_of_a_run_that_lost_its_lease_never_reaches_the_saver(sessions, tmp_path):
    from graph.runner import make_checkpointer

    old, new = _taken_over(sessions)
    saver = make_checkpointer(f"sqlite:///{tmp_path / 'checkpoints.db'}")
    reached: list[str] = []
    saver.put = lambda *a, **k: reached.append("put")  # type: ignore[method-assign]
    saver.put_writes = lambda *a, **k: reached.append("put_writes")  # type: ignore[method-assign]

    def check(claim: leases.Claim):
        def run() -> None:
            with sessions() as session:
                leases.check(session, claim.job_id, claim.lease)

        return run

    with pytest.raises(leases.LeaseLost):
        fenced(saver, check(old)).put({}, {}, {}, {})
    with pytest.raises(leases.LeaseLost):
        fenced(saver, check(old)).put_writes({}, [], "task")
    assert reached == []  # no forked checkpoint history
    fenced(saver, check(new)).put({}, {}, {}, {})
    assert reached == ["put"]
