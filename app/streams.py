"""Every server-sent event stream stops when the service does (issue 30, defect 5).

`until_service_stops` wraps a stream's events: at SIGTERM (JobRunner.begin_stop sets `runner.stopping()`) it stops
the stream wherever it waits (a database read, a wait for a change), sends one last `service_stopping` event and
closes, at once; a stream opened while the service drains gets only that event. Without it an open stream holds
uvicorn's graceful shutdown until its timeout and is then cut mid-message with a CancelledError traceback. The
job event streams (app/api/jobs.py) and the dashboard's jobs table (`GET /jobs/live`, app/web/pages.py) use it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any, Protocol

from fastapi.sse import ServerSentEvent

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
        await events.aclose()  # type: ignore[attr-defined]
