"""What the tests share, and what they keep apart, when pytest-xdist runs them in several worker processes
(`pytest` runs the CPU suite on several workers: pyproject's addopts; `-m gpu` runs are serial: tests/conftest.py).

Each worker is a process of its own (PYTEST_XDIST_WORKER=gw0, gw1, ...; unset in a serial run) that collects
every test and runs its share of them. Workers keep apart what two tests may not share at once (a PostgreSQL
database: `postgres_url`), and share what is safe and costly to build twice (the nvcc compile cache, content
addressed and locked per entry: `shared_dir`)."""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

import pytest


def worker() -> str | None:
    """This process's xdist worker id ("gw0", ...), or None in a serial run."""
    return os.environ.get("PYTEST_XDIST_WORKER")


def worker_index() -> int:
    """0 in a serial run and on gw0, 1 on gw1, ..."""
    name = worker()
    return int(name[2:]) if name and name[2:].isdigit() else 0


def shared_dir(tmp_path_factory: pytest.TempPathFactory, name: str) -> Path:
    """`name` under the run's temporary directory, the same directory for every worker of the run (xdist gives
    each worker `<run's basetemp>/gwN` as its own basetemp) and the session's own in a serial run."""
    base = tmp_path_factory.getbasetemp()
    path = (base.parent if worker() else base) / name
    path.mkdir(exist_ok=True)
    return path


def compile_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The run's one nvcc compile cache (a `shared_dir`), for every test that compiles into a shared cache: the
    cache is content addressed (source, flags, nvcc version, sandbox kind) and locked per entry, so the harness
    runtime, a baseline or a candidate that two test modules both build is compiled once for the whole run."""
    return shared_dir(tmp_path_factory, "cm-cache")


@cache  # one check (and CREATE DATABASE) per worker and URL
def postgres_url(url: str) -> str:
    """`url` (postgresql[+psycopg]://.../DATABASE) in a serial run; under xdist the same server's database
    DATABASE_gwN, created if missing: two workers never create, migrate or drop in the same database at once."""
    name = worker()
    if not name:
        return url
    base, database = url.rsplit("/", 1)
    own = f"{database}_{name}"
    import psycopg

    with psycopg.connect(url.replace("+psycopg", ""), autocommit=True, connect_timeout=3) as conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (own,)).fetchone() is None:
            conn.execute(f'CREATE DATABASE "{own}"')
    return f"{base}/{own}"
