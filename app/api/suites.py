"""Suites: a folder of PyTorch references stored as tasks without a job (issue 42, item 5). Each reference is
probed in the sandbox as a job's `pytorch` field is; the refused ones are answered with the reason. A suite is
private to the key that made it (another key's is a 404, as a missing one); `cudamaster suite push PATH` sends a
folder. A campaign's `selection.suite` runs its tasks; GET /api/v1/leaderboard?suite=ID ranks them."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path

from ..schemas import SuiteDetail, SuiteOut, SuiteSubmit
from ..services import suites
from .deps import Reader, SessionDep, SettingsDep, Submitter
from .errors import as_http, responses

router = APIRouter(prefix="/suites", tags=["suites"])

SuiteId = Annotated[str, Path(max_length=64, description="a suite id, su_ and 16 hex digits")]


@router.post(
    "",
    status_code=201,
    response_model=SuiteDetail,
    summary="Store a folder of PyTorch references as a suite of tasks",
    responses=responses(400, 401, 403, 413, 429, 503),
)
def create_suite(body: SuiteSubmit, session: SessionDep, caller: Submitter, settings: SettingsDep) -> SuiteDetail:
    """Each reference runs in the sandbox (the submit-time limits of a job's `pytorch` field, one after another); a
    reference that cannot be a task is listed in `refused` with the reason and the others are stored."""
    with as_http():
        return suites.create(session, caller, body, settings)


@router.get("", response_model=list[SuiteOut], summary="List this key's suites, newest first", responses=responses(401, 403))
def list_suites(session: SessionDep, caller: Reader) -> list[SuiteOut]:
    return suites.listing(session, caller)


@router.get("/{suite_id}", response_model=SuiteDetail, summary="A suite's tasks and refused references", responses=responses(401, 403, 404))
def get_suite(suite_id: SuiteId, session: SessionDep, caller: Reader) -> SuiteDetail:
    with as_http():
        return suites.detail(session, caller, suite_id)
