"""Apply the Alembic migrations programmatically: `python -m app.db.migrate [URL]`."""

from __future__ import annotations

import ast
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from alembic.config import Config
    from sqlalchemy import Engine

# migrations/ sits next to app/ both in a checkout and in an installed wheel (it is a package).
MIGRATIONS_DIR = Path(__file__).resolve().parents[2] / "migrations"


def alembic_config(database_url: str) -> Config:
    from alembic.config import Config

    cfg = Config(str(MIGRATIONS_DIR / "alembic.ini"))
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    cfg.set_main_option("sqlalchemy.url", database_url.replace("%", "%%"))
    return cfg


def upgrade(database_url: str, revision: str = "head") -> None:
    from alembic import command

    command.upgrade(alembic_config(database_url), revision)


def _revision_of(path: Path) -> tuple[str, set[str]] | None:
    """(revision, down revisions) a migration file declares, read (not run); None when it declares none."""
    found: dict[str, object] = {}
    for node in ast.parse(path.read_text(), str(path)).body:
        target: ast.expr
        if isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        elif isinstance(node, ast.Assign):
            target, value = node.targets[0], node.value
        else:
            continue
        if isinstance(target, ast.Name) and target.id in ("revision", "down_revision"):
            found[target.id] = ast.literal_eval(value)
    if not isinstance(found.get("revision"), str):
        return None
    down = found.get("down_revision")
    downs = {down} if isinstance(down, str) else set(down) if isinstance(down, tuple | list) else set()
    return str(found["revision"]), downs


def head_revisions() -> set[str]:
    """The newest revisions of migrations/versions (those no other revision builds on)."""
    revisions, built_on = set(), set()
    for path in (MIGRATIONS_DIR / "versions").glob("*.py"):
        declared = _revision_of(path)
        if declared is not None:
            revisions.add(declared[0])
            built_on |= declared[1]
    return revisions - built_on


def at_head(engine: Engine) -> bool:
    """Whether the database already has the newest schema (then `upgrade` has nothing to do and Alembic, slow to
    import, is not loaded: `cudamaster keys list` starts in well under a second). Any doubt answers False."""
    from sqlalchemy import text
    from sqlalchemy.exc import DBAPIError

    try:
        with engine.connect() as conn:
            current = {row[0] for row in conn.execute(text("SELECT version_num FROM alembic_version"))}
        heads = head_revisions()
    except (DBAPIError, OSError, SyntaxError, ValueError):
        return False
    return bool(heads) and current == heads


def main() -> None:
    from settings import load_settings

    url = sys.argv[1] if len(sys.argv) > 1 else load_settings().service.database_url
    upgrade(url)
    print(f"database at {url.split('@')[-1]} is at the newest schema")


if __name__ == "__main__":
    main()
