"""The dashboard's sessions as stored (dashboard_sessions rows, the shared session secret): app/web/session.py
keeps the cookies, this module the rows."""

from __future__ import annotations

import secrets
from datetime import timedelta

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from ..db.models import ApiKey, DashboardSession, ServiceSecret
from ..db.types import utcnow
from ..permissions import Caller
from ..store.upsert import insert_ignore


def shared_secret(session: Session, name: str) -> str:
    """The secret named `name`, generated once per database (replicas read the same row)."""
    insert_ignore(session, ServiceSecret, {"name": name, "value": secrets.token_urlsafe(48), "created_at": utcnow()}, ["name"])
    session.commit()
    return session.scalar(select(ServiceSecret.value).where(ServiceSecret.name == name)) or ""


def signed_in(session: Session, session_id: str) -> Caller | None:
    """The key of a session that has not ended (not logged out, not expired, its key not revoked), or None."""
    row = session.get(DashboardSession, session_id)
    if row is None or row.expires_at <= utcnow():
        return None
    key = session.get(ApiKey, row.api_key_id)
    if key is None or key.revoked_at is not None:
        return None
    return Caller.of(key)


def open_session(session: Session, session_id: str, key_id: str, max_age_s: int) -> None:
    """Store a new session of `key_id`; expired sessions are dropped."""
    now = utcnow()
    session.execute(delete(DashboardSession).where(DashboardSession.expires_at <= now))
    session.add(DashboardSession(id=session_id, api_key_id=key_id, created_at=now, expires_at=now + timedelta(seconds=max_age_s)))
    session.commit()


def end_session(session: Session, session_id: str) -> None:
    session.execute(delete(DashboardSession).where(DashboardSession.id == session_id))
    session.commit()
