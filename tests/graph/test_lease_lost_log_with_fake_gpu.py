"""A run whose checkpoint write is refused because another runner took the job over (issue 40, fault 5) stops with a
clear info line: no "job ... failed" warning, no traceback (nothing failed: the other runner continues the job).
The REAL graph, a FAKE GPU, a checkpointer fenced by a lease that is already lost."""

from __future__ import annotations

import logging

from app.agent import fenced
from app.store.leases import LeaseLost
from graph.runner import start_job

from .conftest import agent_settings
from .test_job_with_fake_gpu import spec


def test_a_run_that_lost_its_lease_logs_no_failure_with_fake_gpu(tmp_path, server, fake_gpu, checkpointer, caplog):
    def lost() -> None:
        raise LeaseLost("the lease runner-a#1 of job taken was taken over by another runner; this run writes nothing more")

    with caplog.at_level(logging.INFO, logger="graph.runner"):
        out = start_job(
            spec(rounds=1, debug=0),
            job_id="taken",
            checkpointer=fenced(checkpointer, lost),
            evaluator=fake_gpu,
            settings=agent_settings(tmp_path, server),
        )
    assert out.status == "stopped" and "another runner" in out.message
    records = [r for r in caplog.records if r.name == "graph.runner"]
    assert not [r for r in records if r.levelno >= logging.WARNING or r.exc_info], [r.getMessage() for r in records]
    assert any("another runner holds it now" in r.getMessage() and r.levelno == logging.INFO for r in records)
