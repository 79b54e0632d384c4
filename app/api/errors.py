"""Error responses: one shape per status, documented in the OpenAPI document for every route.

Every 422 has FastAPI's shape, `{"detail": [{"type", "loc", "msg", "input"?, "ctx"?}, ...]}`, whether
pydantic or a route found the problem (`unprocessable`). Every other error is `{"detail": "<one
line saying what to do>"}`. The service layer's refusals (app/services/errors.py) become these statuses
here (`as_http`): the routes are thin wrappers around the services.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from fastapi import HTTPException, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from ..services import errors as service

_WHAT = {
    400: "the body could not be read (e.g. it is not UTF-8)",
    401: "no API key: send `Authorization: Bearer <key>` or `X-API-Key: <key>`",
    403: "the key is malformed, unknown or revoked, or its role does not allow this",
    404: "no such resource visible to this key (another team's jobs are answered as missing)",
    409: "the job (or key) is not in a state that allows this; the detail says what is possible",
    413: "the request body or a source in it is larger than the service accepts",
    429: "over a limit (jobs in flight, submissions or compiles per minute, open streams, failed sign-ins): "
    "retry after the seconds the Retry-After header says",
    503: "no GPU to run jobs on (none found and no remote GPU workers): run the service on a GPU machine or point it at GPU workers",
}


# The HTTP status of each kind of refusal of the service layer.
STATUS: dict[type[service.ServiceError], int] = {
    service.NotFound: 404,
    service.Forbidden: 403,
    service.Conflict: 409,
    service.TooLarge: 413,
    service.TooMany: 429,
    service.Unavailable: 503,
}


@contextmanager
def as_http() -> Iterator[None]:
    """Run a service call; its refusal is raised as the HTTP error the API answers (422s in pydantic's shape)."""
    try:
        yield
    except service.Invalid as exc:
        raise RequestValidationError(exc.errors()) from None
    except service.TooMany as exc:
        raise too_many(str(exc), exc.retry_after) from None
    except service.ServiceError as exc:
        raise HTTPException(STATUS.get(type(exc), 400), str(exc)) from None


def too_many(message: str, retry_after: int) -> HTTPException:
    """A 429: every one says when to retry (Retry-After, whole seconds)."""
    return HTTPException(429, message, headers={"Retry-After": str(retry_after)})


class ErrorOut(BaseModel):
    detail: str


# Spelled out (not `model=`): FastAPI would file an error under the route's own media type, which for
# a source (text/x-cuda) or an event stream is not what an error is sent as.
_ERROR_CONTENT = {"application/json": {"schema": ErrorOut.model_json_schema()}}


_RETRY_AFTER = {"Retry-After": {"description": "seconds after which the request can succeed", "schema": {"type": "integer"}}}


def responses(*codes: int) -> dict[int | str, dict[str, Any]]:
    """The `responses=` of a route that can answer these codes. A route that takes a key (401) can also answer 429:
    its key id or the caller's address failed to authenticate too often (app/services/keys.py)."""
    if 401 in codes and 429 not in codes:
        codes = (*codes, 429)
    return {
        code: {"description": _WHAT[code], "content": _ERROR_CONTENT} | ({"headers": _RETRY_AFTER} if code == 429 else {}) for code in codes
    }


def unprocessable(loc: tuple[str | int, ...], msg: str, value: Any = None, ctx: dict[str, Any] | None = None) -> RequestValidationError:
    """A 422 found by a route, in the same shape as pydantic's: raise the result."""
    error: dict[str, Any] = {"type": "value_error", "loc": loc, "msg": msg}
    if value is not None:
        error["input"] = value
    if ctx:
        error["ctx"] = ctx
    return RequestValidationError([error])


def _finite(value: Any) -> Any:
    """JSON has no inf or nan (`rounds: 1e309` arrives as inf): echo them as text; a lone surrogate (`"\\ud800"`,
    no UTF-8 for it) is echoed escaped, as the JSON sent it."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode()
    if isinstance(value, dict):
        return {_finite(k): _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def _without_exceptions(error: dict[str, Any]) -> dict[str, Any]:
    """A pydantic error less the exception object in its ctx (JSON writes it `{}`; its text is already `msg`)."""
    ctx = {k: v for k, v in (error.get("ctx") or {}).items() if not isinstance(v, BaseException)}
    return {k: v for k, v in error.items() if k != "ctx"} | ({"ctx": ctx} if ctx else {})


async def validation_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    return JSONResponse(status_code=422, content={"detail": _finite(jsonable_encoder([_without_exceptions(e) for e in exc.errors()]))})
