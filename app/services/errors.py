"""What the service refuses, by kind. app/api/errors.py maps each kind onto its HTTP status; a page shows
the message (the same text the API answers)."""

from __future__ import annotations

from typing import Any


class ServiceError(Exception):
    """A refused request; its message says why and what to do instead."""


class NotFound(ServiceError):
    """Missing, or another team's (the same answer: ids do not leak)."""


class Forbidden(ServiceError):
    """The caller may read it but not do this."""


class Conflict(ServiceError):
    """Not in a state that allows it (e.g. cancelling a finished job)."""


class TooLarge(ServiceError):
    """A body part over its size limit."""


class TooMany(ServiceError):
    """Over a limit (the key's jobs in flight, its submissions or compiles per minute, its open streams, failed
    authentications): `retry_after` is the seconds after which a retry can succeed (the 429's Retry-After)."""

    IN_FLIGHT_RETRY_S = 10  # a job in flight ends when it ends: look again in this many seconds

    def __init__(self, message: str, retry_after: int = IN_FLIGHT_RETRY_S) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class Unavailable(ServiceError):
    """Nothing here can do it now (no GPU to run jobs, no sandbox to check a baseline)."""


class Invalid(ServiceError):
    """A field found wrong past the body's own validation: `loc` names it as pydantic would."""

    def __init__(self, loc: tuple[str | int, ...], msg: str, value: Any = None, ctx: dict[str, Any] | None = None) -> None:
        super().__init__(msg)
        self.loc, self.msg, self.value, self.ctx = loc, msg, value, ctx

    def errors(self) -> list[dict[str, Any]]:
        """The error in pydantic's shape (what a 422 carries)."""
        error: dict[str, Any] = {"type": "value_error", "loc": self.loc, "msg": self.msg}
        if self.value is not None:
            error["input"] = self.value
        if self.ctx:
            error["ctx"] = self.ctx
        return [error]
