"""INSERT ... ON CONFLICT DO NOTHING on SQLite and PostgreSQL: events re-sent after a resume store once."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session


def _insert(session: Session):
    dialect = session.get_bind().dialect.name
    if dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    elif dialect == "sqlite":
        from sqlalchemy.dialects.sqlite import insert  # type: ignore[assignment]
    else:  # pragma: no cover - only the two supported databases
        raise RuntimeError(f"unsupported database {dialect!r}: use SQLite or PostgreSQL")
    return insert


def upsert(session: Session, model: type, values: dict[str, Any], conflict: list[str], *, where: Any = None) -> None:
    """Insert a row, or update the one with the same `conflict` columns to `values` (only if `where` holds)."""
    stmt = _insert(session)(model).values(**values)
    changed = {k: stmt.excluded[k] for k in values if k not in conflict}
    session.execute(stmt.on_conflict_do_update(index_elements=conflict, set_=changed, where=where))


def insert_ignore(session: Session, model: type, values: dict[str, Any], conflict: list[str]) -> bool:
    """Insert a row unless one with the same `conflict` columns exists; True when a row was inserted."""
    stmt = _insert(session)(model).values(**values).on_conflict_do_nothing(index_elements=conflict)
    return session.execute(stmt).rowcount == 1  # type: ignore[attr-defined]
