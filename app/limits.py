"""Limits: the request size (on the bytes actually received), and the per-key in-flight job limit
(counted and taken in one locked transaction)."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from sqlalchemy import update
from sqlalchemy.orm import Session

from .db.models import ApiKey
from .db.types import utcnow
from .store.jobs import in_flight_count

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

# After refusing a body, read and drop at most this much more of it, so that the client (still
# sending) reads the 413 instead of a reset connection; past that the connection is dropped.
_DRAIN_BYTES = 64 * 1024 * 1024


class BodySizeLimit:
    """ASGI middleware: refuse request bodies over `max_bytes` with 413 and a message.

    The body is read (at most `max_bytes` of it are kept) before the app sees the request, so the
    limit holds whether or not Content-Length was sent (chunked uploads), and the app never meets a
    half-read body (FastAPI would answer 400 "error parsing the body").
    """

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", []):
            if name == b"content-length" and value.isdigit() and int(value) > self.max_bytes:
                await self._drain(receive, 0)
                await self._refuse(send, int(value))
                return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away before sending its body
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                if message.get("more_body", False):
                    size = await self._drain(receive, size)
                await self._refuse(send, size)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body, delivered = b"".join(chunks), False

        async def replay() -> Message:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()  # http.disconnect (an event stream waits on it)

        await self.app(scope, replay, send)

    @staticmethod
    async def _drain(receive: Receive, size: int) -> int:
        start = size
        while size - start < _DRAIN_BYTES:
            message = await receive()
            if message["type"] != "http.request":
                break
            size += len(message.get("body", b""))
            if not message.get("more_body", False):
                break
        return size

    async def _refuse(self, send: Send, size: int) -> None:
        body = json.dumps(
            {
                "detail": f"request body of {size} bytes or more exceeds the limit of {self.max_bytes} bytes "
                "(CUDAMASTER_SERVICE__MAX_REQUEST_BYTES); send a smaller kernel or raise the limit"
            }
        ).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
            }
        )
        await send({"type": "http.response.body", "body": body})


class InFlightLimit(Exception):
    def __init__(self, key_id: str, count: int, limit: int) -> None:
        super().__init__(
            f"API key {key_id} already has {count} jobs queued, running or waiting; the limit is {limit} "
            "(CUDAMASTER_SERVICE__MAX_JOBS_IN_FLIGHT_PER_KEY): wait for one to finish or cancel one"
        )


def take_job_slot(session: Session, key_id: str, limit: int, *, adding: int = 1) -> None:
    """Lock the key's row, then count its active jobs: raise InFlightLimit if `adding` more would pass `limit`.

    Call it in the transaction that then inserts (or re-queues) the job, before any read in it that
    the decision depends on, and commit that transaction: the lock is held until then, so concurrent
    submissions with one key are counted one after the other. The lock is an UPDATE of the key's row,
    which takes a row lock on PostgreSQL and the database's write lock on SQLite (SELECT ... FOR
    UPDATE would lock nothing on SQLite). On InFlightLimit the transaction is rolled back.
    """
    session.execute(update(ApiKey).where(ApiKey.id == key_id).values(last_submit_at=utcnow()))
    count = in_flight_count(session, key_id)
    if count + adding > limit:
        session.rollback()
        raise InFlightLimit(key_id, count, limit)
