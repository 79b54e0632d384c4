"""Alembic environment: the URL comes from the config (set by app.db.migrate) or CUDAMASTER_SERVICE__DATABASE_URL."""

from __future__ import annotations

from alembic import context

from app.db.engine import make_engine
from app.db.models import Base
from settings import load_settings

config = context.config
target_metadata = Base.metadata


def include_object(obj, name, type_, reflected, compare_to):
    # Tables we do not own (LangGraph's checkpoint tables share a PostgreSQL database) are left alone.
    return not (type_ == "table" and reflected and compare_to is None)


def _url() -> str:
    return config.get_main_option("sqlalchemy.url") or load_settings().service.database_url


def run_migrations_offline() -> None:
    context.configure(url=_url(), target_metadata=target_metadata, literal_binds=True, include_object=include_object, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    engine = make_engine(_url())
    try:
        with engine.connect() as conn:
            _run(conn)
            conn.commit()
    finally:
        engine.dispose()


def _run(connection) -> None:
    context.configure(
        connection=connection, target_metadata=target_metadata, include_object=include_object, render_as_batch=True, compare_type=True
    )
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
