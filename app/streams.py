"""Every server-sent event stream stops when the service does (issue 30, defect 5).

`until_service_stops` wraps a stream's events: at SIGTERM (JobRunner.begin_stop sets `runner.stopping()`) it stops
the stream wherever it waits (a database read, a wait for a change), sends one last `service_stopping` event and
closes, at once; a stream opened while the service drains gets only that event. Without it an open stream holds
uvicorn's graceful shutdown until its timeout and is then cut mid-message with a CancelledError traceback. The
job event streams (app/api/jobs.py) and the dashboard's jobs table (`GET /jobs/live`, app/web/jobs_pages.py) use it.

A client that goes away ends the stream quietly (issue 40): the step in flight (a task of its own, so that the
stop can interrupt it) is cancelled and waited for before the events are closed; closing them while that step
still ran them raised `RuntimeError: aclose(): asynchronous generator is already running`, logged with a
traceback at every disconnect. `open_stream` holds one of the key's stream slots
(CUDAMASTER_SERVICE__MAX_STREAMS_PER_KEY) while a stream is open: the API's job event streams and every dashboard
stream (app/web/base.py's StreamSlot, held by the signed-in key) take one.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from typing import Any, Protocol

import anyio
from fastapi.sse import ServerSentEvent

from settings import ServiceSettings

from .limits import service_limits

SERVICE_STOPPING = "service_stopping"


class Stoppable(Protocol):
    draining: bool

    def stopping(self) -> asyncio.Event: ...


def service_stopping(message: str, **data: Any) -> ServerSentEvent:
    """The last event of a stream closed because the service is stopping; `message` says what the client does next."""
    return ServerSentEvent(data={**data, "message": f"the service is stopping; {message}"}, event=SERVICE_STOPPING)


async def _cancelled(task: asyncio.Future) -> None:
    """Cancel `task` and wait until it is done. Cancelled again until it is: on Python 3.11 a wait_for whose
    awaitable completes as it is cancelled swallows the cancellation (and a stream would then go on)."""
    while not task.done():
        task.cancel()
        await asyncio.wait((task,), timeout=0.1)
    if not task.cancelled():
        task.exception()  # retrieved: no "exception was never retrieved" warning


async def until_service_stops(
    runner: Stoppable, events: AsyncIterator[ServerSentEvent], last: ServerSentEvent
) -> AsyncIterator[ServerSentEvent]:
    """`events` until they end, or until the service stops: then `last`, and the stream closes."""

    async def step() -> ServerSentEvent:
        return await anext(events)

    stopped = asyncio.ensure_future(runner.stopping().wait())
    following: asyncio.Future[ServerSentEvent] | None = None
    try:
        while not runner.draining:
            following = asyncio.ensure_future(step())
            await asyncio.wait((following, stopped), return_when=asyncio.FIRST_COMPLETED)
            if not following.done():  # the service stops while the stream waits: stop it there
                await _cancelled(following)
                break
            try:
                event = following.result()
            except StopAsyncIteration:
                return
            yield event
        yield last
    finally:
        stopped.cancel()
        with anyio.CancelScope(shield=True):  # the client went away (a cancellation): the clean-up still runs
            if following is not None:
                await _cancelled(following)  # the step in flight first: it runs `events`
            await events.aclose()  # type: ignore[attr-defined]


@contextmanager
def open_stream(settings: ServiceSettings, holder: str) -> Iterator[None]:
    """Hold one of `holder`'s (a key id) event stream slots while the block runs; TooMany (429 with Retry-After)
    when it has CUDAMASTER_SERVICE__MAX_STREAMS_PER_KEY open."""
    limits = service_limits(settings)
    limits.take_stream(holder)
    try:
        yield
    finally:
        limits.streams.give(holder)
