"""Transient database faults: which errors a short outage (or a bounded lock wait) raises, and a bounded retry
with backoff for them. The runner's writes (app/runner.py), the checkpointer (app/agent.py) and the API's 503
answer (app/main.py) all ask `is_transient` here, so a hiccup is classified one way everywhere.

Transient: a lost or refused connection, a pool that found no live connection in time, a lock wait past
`lock_timeout`, a serialization failure (psycopg.OperationalError and its subclasses, SQLAlchemy's
OperationalError around one, a DBAPIError whose connection was invalidated), and SQLite's "database is
locked". Not transient: a missing table, a refused permission, a constraint: retrying will not fix those.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")
FIRST_WAIT_S = 0.1
LONGEST_WAIT_S = 2.0


def _driver_transient(exc: BaseException) -> bool:
    import sqlite3

    try:
        import psycopg
    except ImportError:  # pragma: no cover - psycopg is a dependency
        psycopg = None  # type: ignore[assignment]
    if psycopg is not None and isinstance(exc, psycopg.OperationalError):
        return True
    if isinstance(exc, sqlite3.OperationalError):
        return "locked" in str(exc) or "unable to open" in str(exc)
    return False


def is_transient(exc: BaseException) -> bool:
    """Whether `exc` is a database fault that retrying later may fix (see the module's docstring)."""
    from sqlalchemy import exc as sa

    if isinstance(exc, sa.DBAPIError):
        return bool(exc.connection_invalidated) or (exc.orig is not None and _driver_transient(exc.orig))
    if isinstance(exc, sa.TimeoutError):  # the engine's pool had no connection to give in time
        return True
    return _driver_transient(exc)


def retry(fn: Callable[[], T], *, within_s: float, what: str, log: logging.Logger, sleep: Callable[[float], None] = time.sleep) -> T:
    """fn(), tried again with backoff (0.1 s doubling up to 2 s) while it raises a transient database fault, for
    up to `within_s` seconds; then the last fault is raised. Anything else is raised at once."""
    deadline = time.monotonic() + within_s
    wait, tries = FIRST_WAIT_S, 0
    while True:
        try:
            result = fn()
        except Exception as exc:
            if not is_transient(exc) or time.monotonic() + wait > deadline:
                raise
            tries += 1
            if tries == 1:
                log.warning("%s: the database is unreachable (%s); trying again for up to %.0f s", what, type(exc).__name__, within_s)
            sleep(wait)
            wait = min(wait * 2, LONGEST_WAIT_S)
            continue
        if tries:
            log.info("%s: the database answered again after %d retries", what, tries)
        return result


class LeaseTakenOver(RuntimeError):
    """A write of the run was refused: another runner holds the job now (the service's lease fencing raises a
    subclass, app.store.leases.LeaseLost). Not a failure of the job: this run stops, the other one continues."""
