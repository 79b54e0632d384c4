"""Dependencies: a database session per request, the caller's key and role, and the job lookups that
apply app/permissions.py (another team's job is a 404, a teammate's job one may not act on a 403)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated

from fastapi import Depends, HTTPException, Request
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.orm import Session

from settings import ServiceSettings

from .. import permissions
from ..evaluation import Evaluation
from ..permissions import Caller
from ..runner import JobRunner
from ..services import access, keys
from .errors import as_http

_bearer = HTTPBearer(auto_error=False, description="Authorization: Bearer cm_<id>_<secret>")
_header = APIKeyHeader(name="X-API-Key", auto_error=False, description="or X-API-Key: cm_<id>_<secret>")


def get_session(request: Request) -> Iterator[Session]:
    with request.app.state.sessions() as session:
        yield session


def get_settings(request: Request) -> ServiceSettings:
    settings: ServiceSettings = request.app.state.settings
    return settings


def get_runner(request: Request) -> JobRunner:
    runner: JobRunner = request.app.state.runner
    return runner


SessionDep = Annotated[Session, Depends(get_session)]
SettingsDep = Annotated[ServiceSettings, Depends(get_settings)]
RunnerDep = Annotated[JobRunner, Depends(get_runner)]


def _caller(request: Request, bearer: HTTPAuthorizationCredentials | None, header: str | None, *, write: bool) -> Caller:
    key = (bearer.credentials if bearer else None) or header
    settings: ServiceSettings = request.app.state.settings
    if not key:
        if not write:
            from ..web.session import current  # a dashboard session reads like its key (GET only: forms carry CSRF tokens)

            web = current(request)
            if web is not None:
                return web.caller
            if settings.open_reads:
                return Caller.anonymous()
        raise HTTPException(
            401,
            "this request needs an API key: send `Authorization: Bearer <key>` or `X-API-Key: <key>` "
            "(create one with `cudamaster keys create --name TEAM`)",
            headers={"WWW-Authenticate": "Bearer"},
        )
    # A short session of its own: the check must not keep a connection (or a transaction) open for
    # the length of a long response such as an event stream. No answer names the database (issue 40).
    with request.app.state.sessions() as session, as_http():
        return keys.authenticate(session, key, request.client.host if request.client else None, settings)


def reader(
    request: Request,
    bearer: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
    header: Annotated[str | None, Depends(_header)],
) -> Caller:
    """Any valid key (or nobody, when CUDAMASTER_SERVICE__OPEN_READS=true): reads what its team may read."""
    return _caller(request, bearer, header, write=False)


def key_holder(
    request: Request,
    bearer: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
    header: Annotated[str | None, Depends(_header)],
) -> Caller:
    """Any valid key; what it may do is checked against the job it acts on."""
    return _caller(request, bearer, header, write=True)


def submitter(caller: Annotated[Caller, Depends(key_holder)]) -> Caller:
    if not permissions.can_submit(caller):
        raise HTTPException(
            403,
            f"{caller.label} is a {caller.role}: it reads its team's jobs but cannot submit or act on "
            "any; ask an admin for a member key (`cudamaster keys create --role member`)",
        )
    return caller


def admin(caller: Annotated[Caller, Depends(key_holder)]) -> Caller:
    if not permissions.is_admin(caller):
        raise HTTPException(403, f"{caller.label}: managing keys needs an admin key (`cudamaster keys create --role admin`)")
    return caller


Reader = Annotated[Caller, Depends(reader)]
KeyHolder = Annotated[Caller, Depends(key_holder)]
Submitter = Annotated[Caller, Depends(submitter)]
Admin = Annotated[Caller, Depends(admin)]


def no_job(job_id: str) -> HTTPException:
    # The same answer for a job that does not exist and for another team's job: ids do not leak.
    return HTTPException(404, str(access.no_job(job_id)))


def readable_job(session: Session, caller: Caller, job_id: str, *, detail: bool = False) -> access.JobRow:
    with as_http():
        return access.readable_job(session, caller, job_id, detail=detail)


def require_actor(caller: Caller, owned: permissions.Owned, what: str, verb: str) -> None:
    """403 unless the caller may act on `owned` (a job or a campaign of its own team)."""
    with as_http():
        access.require_actor(caller, owned, what, verb)


def actionable_job(session: Session, caller: Caller, job_id: str, verb: str) -> access.JobRow:
    with as_http():
        return access.actionable_job(session, caller, job_id, verb)


def require_gpus(request: Request) -> None:
    """Work that would run a kernel (submit, resume, answer) is refused when nothing can run it."""
    evaluation: Evaluation = request.app.state.evaluation
    with as_http():
        access.require_gpus(evaluation.can_run_jobs, evaluation.note)
