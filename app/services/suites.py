"""Suites of PyTorch references (app/suites.py): create, list, read, for the API's routes and the dashboard's pages.

A suite is private to the key that made it (app/permissions.py, as its tasks are): to any other key, admin included,
it does not exist (404)."""

from __future__ import annotations

import re

from sqlalchemy.orm import Session

from settings import ServiceSettings

from .. import permissions, stored_tasks, suites
from ..bounds import SUITE_ID_PATTERN
from ..db.models import Suite
from ..limits import service_limits
from ..permissions import Caller
from ..schemas import PyTorchTaskIn, SuiteDetail, SuiteOut, SuiteRefusal, SuiteSubmit, SuiteTaskOut
from .errors import Invalid, NotFound


def _check_bounds(body: SuiteSubmit, settings: ServiceSettings) -> None:
    """Over a bound: a 422 before any reference is run."""
    if len(body.references) > settings.max_suite_references:
        raise Invalid(
            ("body", "references"),
            f"the suite lists {len(body.references)} references; at most {settings.max_suite_references} "
            "(CUDAMASTER_SERVICE__MAX_SUITE_REFERENCES): split the folder into several suites",
        )
    size = sum(len(r.reference_py.encode()) for r in body.references)
    if size > settings.max_suite_bytes:
        raise Invalid(
            ("body", "references"),
            f"the suite's references hold {size} bytes of text; at most {settings.max_suite_bytes} "
            "(CUDAMASTER_SERVICE__MAX_SUITE_BYTES): split the folder into several suites",
        )


def create(session: Session, caller: Caller, body: SuiteSubmit, settings: ServiceSettings) -> SuiteDetail:
    """Probe and store every reference as a job's `pytorch` field would be; the refused ones are listed with the reason."""
    _check_bounds(body, settings)
    assert caller.key_id is not None
    service_limits(settings).submit(caller.key_id)  # one submission: a suite probes many files
    refs = [PyTorchTaskIn(**r.model_dump(), precision=body.precision) for r in body.references]
    return _detail(session, suites.create(session, body.name, body.precision, refs, caller.key_id, settings))


def readable_suite(session: Session, caller: Caller, suite_id: str) -> Suite:
    suite = suites.get(session, suite_id) if re.fullmatch(SUITE_ID_PATTERN, suite_id) else None
    if suite is None or not permissions.can_use_custom_task(caller, suite):  # the same answer: ids do not leak
        raise NotFound(
            f"no suite {suite_id[:64]!r} made by {caller.label}: a suite is private to its key; list yours with GET /api/v1/suites"
        )
    return suite


def listing(session: Session, caller: Caller) -> list[SuiteOut]:
    """The caller's suites, newest first."""
    mine = suites.of_key(session, caller.key_id)
    counts = suites.task_counts(session, [s.id for s in mine])
    return [
        SuiteOut(id=s.id, name=s.name, precision=s.precision, created_at=s.created_at, tasks=counts.get(s.id, 0), refused=len(s.refused))
        for s in mine
    ]


def _detail(session: Session, suite: Suite) -> SuiteDetail:
    tasks = []
    for row in suites.task_rows(session, suite.id):
        try:
            task = stored_tasks.register(row)  # rebuilt from its row (the reference is not run)
        except stored_tasks.StoredTaskInvalid as exc:  # a row this checkout cannot rebuild: said, not a 500
            tasks.append(SuiteTaskOut(id=row.id, name=row.name, prototype=f"(not available: {exc})", sizes=[]))
            continue
        prototype = task.variant(suite.precision).prototype.text
        tasks.append(SuiteTaskOut(id=row.id, name=row.name, prototype=prototype, sizes=task.size_list("paper")))
    refused = [SuiteRefusal.model_validate(r) for r in suite.refused]
    return SuiteDetail(id=suite.id, name=suite.name, precision=suite.precision, created_at=suite.created_at, tasks=tasks, refused=refused)


def detail(session: Session, caller: Caller, suite_id: str) -> SuiteDetail:
    return _detail(session, readable_suite(session, caller, suite_id))


def task_ids(session: Session, caller: Caller, suite_id: str) -> list[str]:
    """The task ids of a suite the caller may read (the leaderboard's filter)."""
    return suites.task_ids(session, readable_suite(session, caller, suite_id).id)
