"""`cudamaster serve` and `cudamaster keys create|list|revoke` (mounted by app/cli.py)."""

from __future__ import annotations

from typing import Annotated

import typer
from sqlalchemy import select

from .settings import ServiceSettings

keys_app = typer.Typer(no_args_is_help=True, help="API keys for the service.")


def serve(
    host: Annotated[str | None, typer.Option(help="address to bind (default CUDAMASTER_HOST or 127.0.0.1)")] = None,
    port: Annotated[int | None, typer.Option(help="port (default CUDAMASTER_PORT or 8000)")] = None,
    database_url: Annotated[str | None, typer.Option(help="SQLAlchemy URL; default SQLite under ~/.cache/cudamaster, "
                                                          "postgresql+psycopg://... for PostgreSQL")] = None,
    max_running_jobs: Annotated[int | None, typer.Option(help="jobs executed at once")] = None,
    log_level: Annotated[str, typer.Option(help="uvicorn log level")] = "info",
) -> None:
    """Run the HTTP service and its job runner (SQLite and the local GPU by default)."""
    import uvicorn

    from .main import create_app

    overrides = {k: v for k, v in {"host": host, "port": port, "database_url": database_url,
                                   "max_running_jobs": max_running_jobs}.items() if v is not None}
    settings = ServiceSettings(**overrides)
    typer.echo(f"cudamaster service on http://{settings.host}:{settings.port}/api/v1 (docs: /api/v1/docs), "
               f"database {settings.database_url.split('@')[-1]}")
    uvicorn.run(create_app(settings), host=settings.host, port=settings.port, log_level=log_level, timeout_graceful_shutdown=
                int(settings.drain_seconds) + 5)


def _sessions(database_url: str | None):
    from .db.engine import make_engine, make_sessionmaker
    from .db.migrate import upgrade

    settings = ServiceSettings(**({"database_url": database_url} if database_url else {}))
    upgrade(settings.database_url)
    return make_sessionmaker(make_engine(settings.database_url))


@keys_app.command("create")
def create(name: Annotated[str, typer.Option(help="who the key is for, e.g. a team name")],
           database_url: Annotated[str | None, typer.Option(help="default: CUDAMASTER_DATABASE_URL")] = None) -> None:
    """Create an API key; it is printed once and stored only as a hash."""
    from .auth import create_key

    with _sessions(database_url)() as session:
        row, key = create_key(session, name)
    typer.echo(f"key id {row.id} for {name!r}; store it now, it is not shown again:")
    typer.echo(key)


@keys_app.command("list")
def list_keys(database_url: Annotated[str | None, typer.Option(help="default: CUDAMASTER_DATABASE_URL")] = None) -> None:
    """List key ids, names and whether they are revoked."""
    from .db.models import ApiKey

    with _sessions(database_url)() as session:
        for row in session.scalars(select(ApiKey).order_by(ApiKey.created_at)):
            state = f"revoked {row.revoked_at:%Y-%m-%d %H:%M}" if row.revoked_at else "active"
            typer.echo(f"{row.id}  {row.name}  created {row.created_at:%Y-%m-%d %H:%M}  {state}")


@keys_app.command("revoke")
def revoke(key_id: Annotated[str, typer.Argument(help="the key id (the part after cm_)")],
           database_url: Annotated[str | None, typer.Option(help="default: CUDAMASTER_DATABASE_URL")] = None) -> None:
    """Revoke a key: requests with it get 403 from now on."""
    from .auth import revoke_key

    with _sessions(database_url)() as session:
        if not revoke_key(session, key_id):
            typer.echo(f"no key {key_id}; see `cudamaster keys list`", err=True)
            raise typer.Exit(1)
    typer.echo(f"key {key_id} revoked")
