"""Upgrading an empty database to head gives exactly the models' schema (SQLite and PostgreSQL)."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect

from app.db.engine import make_engine
from app.db.migrate import upgrade
from app.db.models import Base


def test_upgrade_head_matches_models(db_url):
    upgrade(db_url)
    engine = make_engine(db_url)
    try:
        with engine.connect() as conn:
            context = MigrationContext.configure(conn, opts={"compare_type": True, "compare_server_default": True})
            diffs = compare_metadata(context, Base.metadata)
            assert diffs == [], diffs
            tables = set(inspect(conn).get_table_names())
        assert {"jobs", "attempts", "measurements", "profiles", "llm_calls", "api_keys", "job_events", "custom_tasks"} <= tables
        upgrade(db_url)  # idempotent: already at head
    finally:
        engine.dispose()


def test_downgrade_to_base_and_back(db_url):
    from alembic import command

    from app.db.migrate import alembic_config

    upgrade(db_url)
    command.downgrade(alembic_config(db_url), "base")
    engine = make_engine(db_url)
    try:
        with engine.connect() as conn:
            assert set(inspect(conn).get_table_names()) <= {"alembic_version"}
    finally:
        engine.dispose()
    upgrade(db_url)
