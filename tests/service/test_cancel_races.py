"""A cancel is never lost (fault 6 of issue 10): the API's cancel and the runner's settle change a job's
status under the job's row lock, each re-reading the row it decides on. Sequential interleavings that
lost a cancel before: the cancel decided on a status read before the runner settled, or the runner
settled at a question without looking at a cancel stored meanwhile. On SQLite and PostgreSQL."""

from __future__ import annotations

import contextlib
import threading

from app.db.models import CANCELLED, RUNNING, WAITING, Job
from app.store import jobs as store
from app.store import leases

HOLDER = "runner-a"


def _running_job(sessions) -> str:
    with sessions() as session:
        job = store.create_job(session, task="vector_add", precision="fp32", settings={"task": "vector_add"}, api_key_id=None)
        job_id = job.id
    with sessions() as session:
        claims = leases.claim_jobs(session, HOLDER, 60, 10)
        assert [c.job_id for c in claims] == [job_id]
    return job_id


def _lease(sessions, job_id: str) -> str:
    """The lease the runner's claim stored (`<runner id>#<generation>`): what its settle and renew are fenced with."""
    with sessions() as session:
        lease = session.get(Job, job_id).lease_holder
    assert lease is not None and lease.startswith(f"{HOLDER}#")
    return lease


def _status(sessions, job_id: str) -> tuple[str, bool]:
    with sessions() as session:
        job = session.get(Job, job_id)
        return job.status, job.cancel_requested


def test_cancel_read_before_the_job_reached_a_question_is_not_lost(sessions):
    job_id = _running_job(sessions)
    with sessions() as api:
        job = store.get_job(api, job_id)  # the API reads the job: running
        assert job.status == RUNNING
        with sessions() as runner:  # meanwhile the run ends at a question
            assert (
                leases.settle(runner, job_id, _lease(sessions, job_id), "waiting_for_input", "which strategy?", draining=False) == WAITING
            )
        store.request_cancel(api, job)  # decided on the stale read before the fix: cancel_requested on a waiting job
    assert _status(sessions, job_id) == (CANCELLED, False)


def test_cancel_stored_while_the_run_ends_at_a_question_wins(sessions):
    job_id = _running_job(sessions)
    with sessions() as api:
        store.request_cancel(api, store.get_job(api, job_id))
    assert _status(sessions, job_id) == (RUNNING, True)
    with sessions() as runner:
        assert leases.settle(runner, job_id, _lease(sessions, job_id), "waiting_for_input", "which strategy?", draining=False) == CANCELLED
    assert _status(sessions, job_id) == (CANCELLED, False)


def test_cancel_read_while_queued_then_claimed_reaches_the_runner(sessions):
    with sessions() as session:
        job_id = store.create_job(session, task="vector_add", precision="fp32", settings={}, api_key_id=None).id
    with sessions() as api:
        job = store.get_job(api, job_id)  # queued
        with sessions() as runner:
            assert [c.job_id for c in leases.claim_jobs(runner, HOLDER, 60, 10)] == [job_id]
        store.request_cancel(api, job)  # must tell the runner, not mark a running job cancelled behind its back
    assert _status(sessions, job_id) == (RUNNING, True)
    with sessions() as runner:
        assert leases.renew(runner, job_id, _lease(sessions, job_id), 60) == (True, True)


def test_cancelled_running_job_whose_run_failed_on_the_stop_is_cancelled_not_failed(sessions):
    job_id = _running_job(sessions)
    with sessions() as api:
        store.request_cancel(api, store.get_job(api, job_id))
    with sessions() as runner:
        status = leases.settle(runner, job_id, _lease(sessions, job_id), "failed", "the evaluation was interrupted", draining=False)
    assert status == CANCELLED
    with sessions() as session:
        assert "cancelled" in session.get(Job, job_id).message


def test_concurrent_cancels_and_settles_never_lose_a_cancel(sessions):
    """Cancel and settle at a question at the same moment, many times: every job ends cancelled."""
    for _ in range(10):
        job_id = _running_job(sessions)
        barrier = threading.Barrier(2)

        def cancel(job_id: str = job_id, barrier: threading.Barrier = barrier) -> None:
            with sessions() as api:
                job = store.get_job(api, job_id)
                barrier.wait()
                with contextlib.suppress(store.JobStateError):
                    store.request_cancel(api, job)

        def settle(job_id: str = job_id, barrier: threading.Barrier = barrier) -> None:
            with sessions() as runner:
                barrier.wait()
                leases.settle(runner, job_id, _lease(sessions, job_id), "waiting_for_input", "q", draining=False)

        threads = [threading.Thread(target=cancel), threading.Thread(target=settle)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert _status(sessions, job_id) == (CANCELLED, False)
