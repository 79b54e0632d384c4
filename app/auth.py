"""API keys: `cm_<id>_<secret>`; the database keeps the id (public prefix) and sha256 of the whole key."""

from __future__ import annotations

import hashlib
import hmac
import secrets

from sqlalchemy.orm import Session

from .db.models import ApiKey
from .db.types import utcnow

KEY_PREFIX = "cm"


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def create_key(session: Session, name: str) -> tuple[ApiKey, str]:
    """Store a new key; returns (row, the key in clear text — shown once, never stored)."""
    key_id = secrets.token_hex(6)
    key = f"{KEY_PREFIX}_{key_id}_{secrets.token_urlsafe(32)}"
    row = ApiKey(id=key_id, name=name, key_hash=hash_key(key), created_at=utcnow())
    session.add(row)
    session.commit()
    return row, key


def revoke_key(session: Session, key_id: str) -> bool:
    row = session.get(ApiKey, key_id)
    if row is None:
        return False
    if row.revoked_at is None:
        row.revoked_at = utcnow()
        session.commit()
    return True


class KeyRejected(Exception):
    """The key is malformed, unknown or revoked; the message says which."""


def verify_key(session: Session, key: str) -> ApiKey:
    parts = key.split("_", 2)
    if len(parts) != 3 or parts[0] != KEY_PREFIX or not parts[1] or not parts[2]:
        raise KeyRejected("malformed API key: expected cm_<id>_<secret> as printed by `cudamaster keys create`")
    row = session.get(ApiKey, parts[1])
    if row is None or not hmac.compare_digest(row.key_hash, hash_key(key)):
        raise KeyRejected("API key not recognised: check it, or create one with `cudamaster keys create`")
    if row.revoked_at is not None:
        raise KeyRejected(f"API key {row.id} was revoked at {row.revoked_at.isoformat()}; create a new one with `cudamaster keys create`")
    return row
