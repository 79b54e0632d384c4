"""Engines and sessions for SQLite (the default) and PostgreSQL."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError
from sqlalchemy.orm import Session, sessionmaker


def shown_database(url: str) -> str:
    """The database URL without its password (for messages)."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return url.split("@")[-1]


def same_database(a: str, b: str) -> bool:
    """Whether two URLs name one PostgreSQL database (driver names aside), so one transaction can write to both."""
    try:
        ua, ub = make_url(a), make_url(b)
    except ArgumentError:
        return False
    if ua.get_backend_name() != "postgresql" or ub.get_backend_name() != "postgresql":
        return False
    return ua.set(drivername="postgresql") == ub.set(drivername="postgresql")


def make_engine(url: str) -> Engine:
    if url.startswith("sqlite"):
        path = url.split(":///", 1)[1] if ":///" in url else ""
        if path and path != ":memory:":
            Path(path).expanduser().parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})

        @event.listens_for(engine, "connect")
        def _pragmas(dbapi_conn, _record):  # WAL: readers never wait for the runner's writes
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.execute("PRAGMA busy_timeout=30000")
            cur.close()

        return engine
    return create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=20)


def make_sessionmaker(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(engine, expire_on_commit=False)
