"""`cudamaster serve` and `cudamaster keys create|list|revoke` (mounted by app/cli.py).

The service and these commands read the same database: --database-url, else CUDAMASTER_SERVICE__DATABASE_URL,
else SQLite under ~/.cache/cudamaster. Expected failures (a database that is not there, a bad URL)
are one line saying what to do, with exit status 2, never a traceback."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated, Any, Literal, NoReturn

import typer

from settings import ServiceSettings, SettingsInvalid, load_settings

if TYPE_CHECKING:  # SQLAlchemy loads with the commands that open the database, not with `cudamaster --help`
    from sqlalchemy import Engine
    from sqlalchemy.orm import Session

# The roles a key may have (app/permissions.py says what each may do; app.db.models.ROLES, a test keeps them equal).
Role = Literal["admin", "member", "reviewer", "viewer"]
keys_app = typer.Typer(no_args_is_help=True, help="API keys for the service: create, list, revoke.")

DatabaseUrl = Annotated[
    str | None,
    typer.Option(
        help="the service's database (default: CUDAMASTER_SERVICE__DATABASE_URL, else SQLite "
        "under ~/.cache/cudamaster); must be the one `cudamaster serve` uses"
    ),
]


def _fail(message: str) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(2)


def _settings(**overrides: Any) -> ServiceSettings:
    """The settings tree's service section, with the command line's options over it."""
    from pydantic import ValidationError

    try:
        service = load_settings().service
        given = {k: v for k, v in overrides.items() if v is not None}
        return ServiceSettings.model_validate(service.model_dump() | given) if given else service
    except SettingsInvalid as exc:
        _fail(str(exc))
    except ValidationError as exc:
        _fail("; ".join(f"--{'-'.join(map(str, e['loc'])).replace('_', '-')}: {e['msg']}" for e in exc.errors()))


def _shown(url: str) -> str:
    from .db.engine import shown_database  # not app.api: `keys` starts without FastAPI

    return shown_database(url)


def open_database(url: str, *, migrate: bool = True) -> Engine:
    """Reach the database and bring its schema to the newest; exit with one line if that cannot be done."""
    from sqlalchemy import text
    from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError

    from .db.engine import make_engine
    from .db.migrate import at_head

    where = _shown(url)
    try:
        engine = make_engine(url)
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
        if migrate and not at_head(engine):
            _upgrade(url, where)
    except (ArgumentError, NoSuchModuleError) as exc:
        _fail(
            f"{where} is not a database URL this service can use ({exc}); use sqlite:///PATH or "
            "postgresql+psycopg://USER@HOST:PORT/DATABASE"
        )
    except DBAPIError as exc:
        reason = " ".join(str(exc.orig).split())[:300]
        refused = getattr(exc.orig, "sqlstate", None) == "42501" or "no schema has been selected to create in" in reason
        if refused or "permission denied" in reason:
            _fail(
                f"the database {where} refused its role ({reason}): grant the role the rights to read and write there and "
                "to create tables (e.g. `GRANT ALL ON SCHEMA public TO <role>` on its server), or pass --database-url "
                "(or set CUDAMASTER_SERVICE__DATABASE_URL) with a role that has them"
            )
        hint = ""
        if "does not exist" in reason and "database" in reason:
            hint = f" Create it (e.g. `createdb {url.rsplit('/', 1)[-1].split('?')[0]}` on its server), or"
        _fail(
            f"cannot use the database {where}: {reason}.{hint} pass --database-url (or set CUDAMASTER_SERVICE__DATABASE_URL) "
            "to a database that exists"
        )
    return engine


def _upgrade(url: str, where: str) -> None:
    from alembic.util import CommandError  # Alembic loads only when there is a migration to run

    from .db.migrate import upgrade

    try:
        upgrade(url)
    except CommandError as exc:
        _fail(f"cannot bring the database {where} to the newest schema: {exc}")


@contextmanager
def database_session(url: str) -> Iterator[Session]:
    from .db.engine import make_sessionmaker

    engine = open_database(url)
    try:
        with make_sessionmaker(engine)() as session:
            yield session
    finally:
        engine.dispose()


def serve(
    host: Annotated[str | None, typer.Option(help="address to bind (default CUDAMASTER_SERVICE__HOST or 127.0.0.1)")] = None,
    port: Annotated[int | None, typer.Option(help="port (default CUDAMASTER_SERVICE__PORT or 8000)")] = None,
    database_url: Annotated[
        str | None, typer.Option(help="SQLAlchemy URL; default SQLite under ~/.cache/cudamaster, postgresql+psycopg://... for PostgreSQL")
    ] = None,
    max_running_jobs: Annotated[int | None, typer.Option(help="jobs executed at once")] = None,
    log_level: Annotated[str, typer.Option(help="uvicorn log level")] = "info",
    ray: Annotated[
        str | None,
        typer.Option(
            "--ray",
            help="run every compile, evaluation and profile on this Ray cluster "
            "(HOST:6379, ray://HOST:10001 or auto); default: CUDAMASTER_RAY__ADDRESS, "
            "else this machine's GPUs",
        ),
    ] = None,
) -> None:
    """Run the HTTP service and its job runner (SQLite and the local GPU by default)."""
    import uvicorn

    from .main import create_app

    settings = _settings(host=host, port=port, database_url=database_url, max_running_jobs=max_running_jobs)
    ray_settings = load_settings().ray
    if ray:
        ray_settings = ray_settings.model_copy(update={"address": ray})
    if ray_settings.address:
        try:
            import ray as _ray  # noqa: F401
        except ImportError:
            _fail(f'--ray {ray_settings.address}: Ray is not installed here; pip install -e ".[ray]"')
    open_database(settings.database_url, migrate=settings.auto_migrate).dispose()  # fail here in one line, not in uvicorn
    base = f"http://{settings.host}:{settings.port}"
    typer.echo(
        f"cudamaster service on {base}/ (the dashboard; API {base}/api/v1, its docs {base}/api/v1/docs), "
        f"database {_shown(settings.database_url)}"
    )
    typer.echo(f"sandbox for untrusted kernels: {_sandbox_line()}")
    uvicorn.run(
        create_app(settings, ray=ray_settings),
        host=settings.host,
        port=settings.port,
        log_level=log_level,
        timeout_graceful_shutdown=int(settings.drain_seconds) + 5,
    )


def _sandbox_line() -> str:
    """bubblewrap found (its version, what it isolates), or what is missing and what to do."""
    from bench_tasks.harness.sandbox import describe
    from settings import get_harness_settings

    return describe(get_harness_settings())


@keys_app.command("create")
def create(
    name: Annotated[str, typer.Option(help="who the key is for, e.g. a person or a service")],
    role: Annotated[
        Role | None, typer.Option(help="what the key may do (default: member; admin for the first key of an empty database)")
    ] = None,
    team: Annotated[str, typer.Option(help="the key's team: its keys read the team's jobs")] = "default",
    database_url: DatabaseUrl = None,
) -> None:
    """Create an API key; it is printed once (last line) and stored only as a hash."""
    from .auth import KeyInvalid, create_key, key_count

    url = _settings(database_url=database_url).database_url
    with database_session(url) as session:
        first = key_count(session) == 0
        chosen = role or ("admin" if first else "member")
        try:
            row, key = create_key(session, name, role=chosen, team=team)
        except KeyInvalid as exc:
            _fail(str(exc))
    why = " (the first key of this database is an admin unless --role says otherwise)" if first and role is None else ""
    typer.echo(
        f"key id {row.id} for {name!r}: role {row.role}{why}, team {row.team}, in the database {_shown(url)}; "
        "store it now, it is not shown again:"
    )
    typer.echo(key)


@keys_app.command("list")
def list_keys(database_url: DatabaseUrl = None) -> None:
    """List key ids, names, roles, teams and whether they are revoked."""
    from .auth import list_keys as all_keys

    url = _settings(database_url=database_url).database_url
    with database_session(url) as session:
        rows = all_keys(session)
    typer.echo(f"{len(rows)} key(s) in the database {_shown(url)}")
    for row in rows:
        state = f"revoked {row.revoked_at:%Y-%m-%d %H:%M}" if row.revoked_at else "active"
        used = f"last job {row.last_submit_at:%Y-%m-%d %H:%M}" if row.last_submit_at else "no job yet"
        typer.echo(f"{row.id}  {row.name}  role {row.role}  team {row.team}  created {row.created_at:%Y-%m-%d %H:%M}  {used}  {state}")


@keys_app.command("revoke")
def revoke(key_id: Annotated[str, typer.Argument(help="the key id (the part after cm_)")], database_url: DatabaseUrl = None) -> None:
    """Revoke a key: requests with it get 403 from now on."""
    from .auth import revoke_key

    url = _settings(database_url=database_url).database_url
    with database_session(url) as session:
        if not revoke_key(session, key_id):
            _fail(f"no key {key_id!r} in the database {_shown(url)}; see `cudamaster keys list`")
    typer.echo(f"key {key_id} revoked")
