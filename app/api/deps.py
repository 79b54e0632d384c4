"""Dependencies: a database session per request, and the API key check."""

from __future__ import annotations

from collections.abc import Iterator

from fastapi import Depends, HTTPException, Request
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.orm import Session

from ..auth import KeyRejected, verify_key
from ..db.models import ApiKey
from ..runner import JobRunner
from ..settings import ServiceSettings

_bearer = HTTPBearer(auto_error=False, description="Authorization: Bearer cm_<id>_<secret>")
_header = APIKeyHeader(name="X-API-Key", auto_error=False, description="or X-API-Key: cm_<id>_<secret>")


def get_session(request: Request) -> Iterator[Session]:
    with request.app.state.sessions() as session:
        yield session


def get_settings(request: Request) -> ServiceSettings:
    return request.app.state.settings


def get_runner(request: Request) -> JobRunner:
    return request.app.state.runner


def _check(request: Request, bearer: HTTPAuthorizationCredentials | None, header: str | None, *, write: bool) -> ApiKey | None:
    key = (bearer.credentials if bearer else None) or header
    if not key:
        if not write and request.app.state.settings.open_reads:
            return None
        raise HTTPException(401, "this request needs an API key: send `Authorization: Bearer <key>` or `X-API-Key: <key>` "
                                 "(create one with `cudamaster keys create --name TEAM`)", headers={"WWW-Authenticate": "Bearer"})
    # A short session of its own: the check must not keep a connection (or a transaction) open for
    # the length of a long response such as an event stream.
    with request.app.state.sessions() as session:
        try:
            return verify_key(session, key)
        except KeyRejected as exc:
            raise HTTPException(403, str(exc)) from None


def read_access(request: Request, bearer=Depends(_bearer), header: str | None = Depends(_header)) -> ApiKey | None:
    return _check(request, bearer, header, write=False)


def write_access(request: Request, bearer=Depends(_bearer), header: str | None = Depends(_header)) -> ApiKey:
    key = _check(request, bearer, header, write=True)
    assert key is not None
    return key
