"""Limits: the request size (on the bytes actually received), the per-key in-flight job limit (counted and
taken in one locked transaction), and the limits over time and at once of one service process (`ServiceLimits`):
submissions and submit-time compiles per key per minute, compiles at once (over all keys and per key), failed
authentications per key id and per client address, and open event streams per key. Each refusal is a `Limited`
carrying the seconds after which a retry can succeed (the 429's `Retry-After`)."""

from __future__ import annotations

import json
import math
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from contextlib import contextmanager
from typing import Any

from sqlalchemy import update
from sqlalchemy.orm import Session

from settings import ServiceSettings

from .db.models import ApiKey
from .db.types import utcnow
from .services.errors import TooMany
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


class Limited(TooMany):
    """Over a limit over time or at once: the service's TooMany (a 429), `retry_after` rounded up to whole seconds
    after which the same request can succeed."""

    def __init__(self, message: str, retry_after: float) -> None:
        super().__init__(message, max(1, math.ceil(retry_after)))


WINDOW_S = 60.0
BUSY_RETRY_S = 5  # a slot held by a compile or a stream: try again in this many seconds
_MAX_TRACKED = 10_000  # names a window keeps; past it, names without a hit in the window are dropped


class RateWindow:
    """At most `limit` hits per name in any `window_s` seconds (a sliding log of each name's hit times)."""

    def __init__(self, limit: int, window_s: float = WINDOW_S, clock: Callable[[], float] = time.monotonic) -> None:
        self.limit, self.window_s, self.clock = limit, window_s, clock
        self._hits: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def _recent(self, name: str, now: float) -> deque[float]:
        hits = self._hits.get(name)
        if hits is None:
            if len(self._hits) >= _MAX_TRACKED:
                self._hits = {k: v for k, v in self._hits.items() if v and v[-1] > now - self.window_s}
            hits = self._hits[name] = deque()
        while hits and hits[0] <= now - self.window_s:
            hits.popleft()
        return hits

    def wait_s(self, name: str) -> float | None:
        """Seconds until `name` may be hit again (None: now)."""
        return self._check(name, count=False)

    def hit(self, name: str) -> float | None:
        """Count a hit of `name`, unless it is over its limit: then the seconds until it is not (and nothing counted)."""
        return self._check(name, count=True)

    def _check(self, name: str, *, count: bool) -> float | None:
        with self._lock:
            now = self.clock()
            hits = self._recent(name, now)
            if len(hits) >= self.limit:
                return hits[0] + self.window_s - now
            if count:
                hits.append(now)
            return None

    def count(self, name: str) -> int:
        with self._lock:
            return len(self._recent(name, self.clock()))


class Slots:
    """At most `total` holders at once, and at most `per_name` of one name."""

    def __init__(self, total: int | None, per_name: int) -> None:
        self.total, self.per_name = total, per_name
        self._held: dict[str, int] = {}
        self._lock = threading.Lock()

    def take(self, name: str) -> str | None:
        """Take a slot for `name`; returns why not (None: taken)."""
        with self._lock:
            mine, everyone = self._held.get(name, 0), sum(self._held.values())
            if mine >= self.per_name:
                return f"{mine} already open for it, the limit is {self.per_name}"
            if self.total is not None and everyone >= self.total:
                return f"{everyone} already running in this process, the limit is {self.total}"
            self._held[name] = mine + 1
            return None

    def give(self, name: str) -> None:
        with self._lock:
            left = self._held.get(name, 0) - 1
            if left > 0:
                self._held[name] = left
            else:
                self._held.pop(name, None)

    def held(self, name: str | None = None) -> int:
        with self._lock:
            return sum(self._held.values()) if name is None else self._held.get(name, 0)


def _per_minute(window: RateWindow, key_id: str, did: str, setting: str, *, count: bool) -> None:
    """Limited when `key_id` did its `window.limit` of something (`did`: "submitted 3 jobs") in the last minute;
    with `count`, this one is counted when it is not."""
    wait = window.hit(key_id) if count else window.wait_s(key_id)
    if wait is not None:
        raise Limited(
            f"API key {key_id} {did} in the last minute, its limit (CUDAMASTER_SERVICE__{setting}): retry in {math.ceil(wait)} s", wait
        )


class ServiceLimits:
    """The limits over time and at once of one service process (one per ServiceSettings: `service_limits`)."""

    def __init__(self, settings: ServiceSettings) -> None:
        self.submits = RateWindow(settings.max_submits_per_minute_per_key)
        self.compile_starts = RateWindow(settings.max_compiles_per_minute_per_key)
        self.compiles = Slots(settings.max_compiles_at_once, settings.max_compiles_at_once_per_key)
        self.auth_failures_by_key = RateWindow(settings.max_auth_failures_per_minute_per_key)
        self.auth_failures_by_address = RateWindow(settings.max_auth_failures_per_minute_per_address)
        self.streams = Slots(None, settings.max_streams_per_key)

    def submit(self, key_id: str) -> None:
        """Count one submission of `key_id`; Limited when it made its limit of them in the last minute."""
        _per_minute(self.submits, key_id, f"submitted {self.submits.limit} jobs", "MAX_SUBMITS_PER_MINUTE_PER_KEY", count=True)

    @contextmanager
    def compile(self, key_id: str) -> Iterator[None]:
        """Hold a submit-time compile slot of `key_id` while the block runs; Limited when none is free or when the
        key started its limit of compiles in the last minute."""
        did = f"started {self.compile_starts.limit} submit-time compiles"
        _per_minute(self.compile_starts, key_id, did, "MAX_COMPILES_PER_MINUTE_PER_KEY", count=False)
        why = self.compiles.take(key_id)
        if why is not None:
            raise Limited(
                f"no submit-time compile slot for API key {key_id}: {why} (CUDAMASTER_SERVICE__MAX_COMPILES_AT_ONCE, "
                f"CUDAMASTER_SERVICE__MAX_COMPILES_AT_ONCE_PER_KEY): retry in {BUSY_RETRY_S} s",
                BUSY_RETRY_S,
            )
        try:
            self.compile_starts.hit(key_id)
            yield
        finally:
            self.compiles.give(key_id)

    def auth_blocked(self, key_id: str | None, address: str | None) -> float | None:
        """Seconds until this key id and address may try to authenticate again (None: now)."""
        waits = [self.auth_failures_by_key.wait_s(key_id) if key_id else None]
        waits.append(self.auth_failures_by_address.wait_s(address) if address else None)
        return max((w for w in waits if w is not None), default=None)

    def auth_failed(self, key_id: str | None, address: str | None) -> tuple[int, int]:
        """Count a failed authentication; returns the failures of the key id and of the address in the last minute."""
        if key_id:
            self.auth_failures_by_key.hit(key_id)
        if address:
            self.auth_failures_by_address.hit(address)
        by_key = self.auth_failures_by_key.count(key_id) if key_id else 0
        return by_key, self.auth_failures_by_address.count(address) if address else 0

    def take_stream(self, key_id: str) -> None:
        """Take one of `key_id`'s event stream slots (give it back with `streams.give`); Limited when it has its
        limit open."""
        why = self.streams.take(key_id)
        if why is not None:
            raise Limited(
                f"API key {key_id} has its limit of event streams open: {why} (CUDAMASTER_SERVICE__MAX_STREAMS_PER_KEY); "
                "close one (a page or a client following a job) and retry",
                BUSY_RETRY_S,
            )


_registry: dict[int, tuple[ServiceSettings, ServiceLimits]] = {}
_registry_lock = threading.Lock()


def service_limits(settings: ServiceSettings) -> ServiceLimits:
    """The ServiceLimits of the service that runs with `settings` (its app's settings object: one per process
    and app, shared by the API's routes and the dashboard's pages)."""
    with _registry_lock:
        kept = _registry.get(id(settings))
        if kept is None or kept[0] is not settings:
            kept = _registry[id(settings)] = (settings, ServiceLimits(settings))
        return kept[1]
