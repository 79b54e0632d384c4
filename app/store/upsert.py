"""INSERT ... ON CONFLICT DO NOTHING on SQLite and PostgreSQL: events re-sent after a resume store once."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session


def insert_ignore(session: Session, model: type, values: dict[str, Any], conflict: list[str]) -> bool:
    """Insert a row unless one with the same `conflict` columns exists; True when a row was inserted."""
    dialect = session.get_bind().dialect.name
    if dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    elif dialect == "sqlite":
        from sqlalchemy.dialects.sqlite import insert  # type: ignore[assignment]
    else:  # pragma: no cover - only the two supported databases
        raise RuntimeError(f"unsupported database {dialect!r}: use SQLite or PostgreSQL")
    stmt = insert(model).values(**values).on_conflict_do_nothing(index_elements=conflict)
    return session.execute(stmt).rowcount == 1  # type: ignore[attr-defined]
