"""The dashboard's reads go through app/services/dashboard.py (issue 40, item 12): visibility is a WHERE clause
applied before LIMIT, so a page holds as many of the reader's rows as exist, however many other teams' rows sort
before them; and app/web imports no store and no model (the import-linter contract in pyproject.toml)."""

from __future__ import annotations

import ast
from datetime import timedelta
from pathlib import Path

import pytest

from app.db.engine import make_engine, make_sessionmaker
from app.db.migrate import upgrade
from app.db.models import Job
from app.db.types import utcnow
from app.permissions import Caller
from app.services import dashboard

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def session(db_url):
    upgrade(db_url)
    engine = make_engine(db_url)
    with make_sessionmaker(engine)() as s:
        yield s
    engine.dispose()


def _jobs(session, team: str, n: int, start) -> list[str]:
    ids = [f"job_{team[:4]}{i:012x}" for i in range(n)]
    for i, job_id in enumerate(ids):
        session.add(Job(id=job_id, task="vector_add", precision="fp32", settings={}, team=team, created_at=start + timedelta(seconds=i)))
    session.commit()
    return ids


def test_new_jobs_of_the_readers_team_come_through_other_teams_newer_rows(session):
    """60 jobs of another team created first, then 1 of the reader's: the live table's query (limit 50) finds it.
    Filtering visibility after LIMIT found none (the 50 rows were all the other team's)."""
    since = utcnow() - timedelta(minutes=5)
    _jobs(session, "othr", 60, since)
    mine = _jobs(session, "mine", 1, since + timedelta(minutes=2))
    reader = Caller("key_reader", "reader", "viewer", "mine")
    found = dashboard.jobs_since(session, reader, dashboard.JobFilters(), since, [], limit=50)
    assert [j.id for j in found] == mine


def test_a_page_of_jobs_holds_only_and_all_the_readers_rows(session):
    since = utcnow() - timedelta(minutes=5)
    theirs = _jobs(session, "othr", 30, since + timedelta(minutes=1))  # newer: first in the default sort
    mine = _jobs(session, "mine", 12, since)
    reader = Caller("key_reader", "reader", "member", "mine")
    rows, total = dashboard.jobs_page(session, reader, dashboard.JobFilters(), sort="-created", limit=10, offset=0)
    assert total == 12 and len(rows) == 10 and {j.id for j in rows} <= set(mine)
    assert not {j.id for j in dashboard.jobs_by_id(session, reader, theirs + mine[:2])} - set(mine[:2])
    admin = Caller("key_admin", "admin", "admin", "default")
    assert dashboard.jobs_page(session, admin, dashboard.JobFilters(), sort="-created", limit=100, offset=0)[1] == 42


def test_no_module_of_app_web_imports_a_store_or_a_model():
    """The contract lint-imports checks, read here from the sources too (an import inside a function included)."""
    found = []
    for path in sorted((ROOT / "app" / "web").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.level >= 1:
                name = node.module
            elif isinstance(node, ast.ImportFrom) and node.module:
                name = node.module.removeprefix("app.")
            else:
                continue
            if name.startswith(("store", "db.models")) or any(a.name in ("store", "models") and name in ("", "db") for a in node.names):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} {name}")
    assert found == []
    assert 'forbidden_modules = ["app.store", "app.db.models"]' in (ROOT / "pyproject.toml").read_text()
