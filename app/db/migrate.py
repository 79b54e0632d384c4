"""Apply the Alembic migrations programmatically: `python -m app.db.migrate [URL]`."""

from __future__ import annotations

import sys
from pathlib import Path

from alembic import command
from alembic.config import Config

# migrations/ sits next to app/ both in a checkout and in an installed wheel (it is a package).
MIGRATIONS_DIR = Path(__file__).resolve().parents[2] / "migrations"


def alembic_config(database_url: str) -> Config:
    cfg = Config(str(MIGRATIONS_DIR / "alembic.ini"))
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    cfg.set_main_option("sqlalchemy.url", database_url.replace("%", "%%"))
    return cfg


def upgrade(database_url: str, revision: str = "head") -> None:
    command.upgrade(alembic_config(database_url), revision)


def main() -> None:
    from app.config import load_settings

    url = sys.argv[1] if len(sys.argv) > 1 else load_settings().service.database_url
    upgrade(url)
    print(f"database at {url.split('@')[-1]} is at the newest schema")


if __name__ == "__main__":
    main()
