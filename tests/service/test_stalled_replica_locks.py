"""A replica frozen while it holds a job's row lock (issue 40, faults 1 and 5), on PostgreSQL: the frozen replica is a
connection that took the row's lock in an open transaction and does nothing more (a GC or VM pause, a partitioned
connection).

- Another replica's claim passes the locked job over (`FOR UPDATE SKIP LOCKED`) and claims the others at once.
- Cancelling the locked job gives up after the bounded lock wait with a transient fault (the API answers 503 with
  Retry-After), instead of hanging.
- A checkpoint write checks the lease in its own transaction: a takeover cannot slip in between the check and the
  write (one checkpoint fork in 11 frozen-replica rounds before).

Before the fix, the claim and the cancel waited on the lock for as long as it was held: the test's timeout ends them."""

from __future__ import annotations

import threading
from datetime import timedelta

import psycopg
import pytest
from sqlalchemy.exc import OperationalError

from app.agent import fenced
from app.db.models import CANCELLED, Job
from app.db.types import utcnow
from app.store import jobs as store
from app.store import leases
from graph.database_faults import is_transient

pytestmark = [pytest.mark.timeout(120), pytest.mark.parametrize("db_url", ["postgresql"], indirect=True)]


def _queued(sessions, n: int) -> list[str]:
    with sessions() as session:
        return [
            store.create_job(session, task="vector_add", precision="fp32", settings={"task": "vector_add"}, api_key_id=None).id
            for _ in range(n)
        ]


def _frozen_holding(db_url: str, job_id: str) -> psycopg.Connection:
    """A connection that holds the job's row lock until it is closed (a replica frozen mid-transaction)."""
    conn = psycopg.connect(db_url.replace("+psycopg", ""))
    conn.execute("UPDATE jobs SET updated_at = updated_at WHERE id = %s", (job_id,))
    return conn


def _thaw(frozen: psycopg.Connection) -> None:
    """End the frozen replica's transaction, then its connection: the rollback waits for the server's answer, so the
    row lock is released when this returns (a bare close() only sends a terminate and returns: the server could still
    hold the lock when the next claim looks, as one CI run saw)."""
    frozen.rollback()
    frozen.close()


def test_a_job_locked_by_a_frozen_replica_is_passed_over_and_the_others_are_claimed(db_url, sessions):
    locked, *others = _queued(sessions, 3)
    frozen = _frozen_holding(db_url, locked)
    try:
        with sessions() as session:
            claims = leases.claim_jobs(session, "runner-b", 60, 4)
        assert sorted(c.job_id for c in claims) == sorted(others)
    finally:
        _thaw(frozen)
    with sessions() as session:
        assert [c.job_id for c in leases.claim_jobs(session, "runner-b", 60, 4)] == [locked]


def test_cancelling_a_job_locked_by_a_frozen_replica_ends_with_a_transient_fault(db_url, sessions):
    [job_id] = _queued(sessions, 1)
    frozen = _frozen_holding(db_url, job_id)
    try:
        with sessions() as session, pytest.raises(OperationalError) as raised:
            store.request_cancel(session, session.get(Job, job_id))
        assert is_transient(raised.value)  # the API answers it 503 with Retry-After (app/main.py)
    finally:
        _thaw(frozen)
    with sessions() as session:
        assert store.request_cancel(session, session.get(Job, job_id)).status == CANCELLED


def _checkpoint(job_id: str):
    from langgraph.checkpoint.base import empty_checkpoint

    checkpoint = empty_checkpoint()
    checkpoint["channel_values"] = {"attempts": [1, 2]}  # not a primitive: stored in a blob, inside the write
    config = {"configurable": {"thread_id": job_id, "checkpoint_ns": ""}}
    return config, checkpoint, {"step": 1}, {"attempts": 1}


def test_a_takeover_cannot_slip_between_the_lease_check_and_the_checkpoint_write(db_url, sessions):
    from graph.runner import close_checkpointer, make_checkpointer

    [job_id] = _queued(sessions, 1)
    with sessions() as session:
        [a] = leases.claim_jobs(session, "runner-a", 60, 1)
        session.get(Job, job_id).lease_expires_at = utcnow() - timedelta(seconds=1)  # A stalled past its lease
        session.commit()
    saver = make_checkpointer(db_url)
    in_write, resume = threading.Event(), threading.Event()
    dump = saver._dump_blobs

    def paused_dump(*args, **kwargs):  # A stalls again in the middle of its checkpoint write
        in_write.set()
        resume.wait(60)
        return dump(*args, **kwargs)

    saver._dump_blobs = paused_dump

    def check() -> None:
        with sessions() as session:
            leases.check(session, job_id, a.lease)

    view = fenced(saver, check, lambda cursor: leases.hold_on_cursor(cursor, job_id, a.lease))
    written: list[object] = []
    writer = threading.Thread(target=lambda: written.append(_put(view, job_id)))
    writer.start()
    try:
        assert in_write.wait(60)
        with sessions() as session:
            taken = leases.claim_jobs(session, "runner-b", 60, 1)  # B looks while A is inside its write
        # B took the job over while A was inside its write, and A's write went through after all: a fork.
        assert not (taken and written != ["refused"]), (taken, written)
        resume.set()
        writer.join(60)
        assert taken == [] and written == ["written"], (taken, written)  # B passed the job over while A wrote
        with sessions() as session:
            [_b] = leases.claim_jobs(session, "runner-b", 60, 1)  # after A's write: B takes over
        with pytest.raises(leases.LeaseLost):
            view.put(*_checkpoint(job_id))  # and A writes nothing more
    finally:
        resume.set()
        writer.join(60)
        close_checkpointer(saver)


def _put(view, job_id: str) -> str:
    try:
        view.put(*_checkpoint(job_id))
    except leases.LeaseLost:
        return "refused"
    return "written"
