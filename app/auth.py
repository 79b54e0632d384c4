"""API keys: `cm_<id>_<secret>`; the database keeps the id (public prefix), sha256 of the whole key,
the key's role (admin, member, viewer: app/permissions.py) and its team.

Verifying a key does the same work whether its id exists or not: an unknown id is checked against a dummy
hash (`matches` runs once per well-formed key either way), so the answer's time does not tell which ids exist."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from .bounds import KEY_ID_PATTERN, MAX_NAME_CHARS, TEAM_PATTERN, check_name
from .db.models import ADMIN, DEFAULT_TEAM, ROLES, ApiKey
from .db.types import utcnow

KEY_PREFIX = "cm"


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


class KeyInvalid(ValueError):
    """A role, team or name given for a new key is not valid; the message says what is."""


def check_new_key(name: str, role: str, team: str) -> None:
    if len(name) > MAX_NAME_CHARS:
        raise KeyInvalid(f"key name {name[:40]!r}: at most {MAX_NAME_CHARS} characters")
    try:
        check_name(name)
    except ValueError as exc:
        raise KeyInvalid(f"key name {name[:40]!r}: {exc}") from None
    if role not in ROLES:
        raise KeyInvalid(f"role {role[:40]!r}: choose one of {', '.join(ROLES)}")
    if re.fullmatch(TEAM_PATTERN, team) is None:
        raise KeyInvalid(f"team {team[:70]!r}: 1-64 characters: lower-case letters, digits, _ . - (starting with a letter or digit)")


def create_key(session: Session, name: str, *, role: str = "member", team: str = DEFAULT_TEAM) -> tuple[ApiKey, str]:
    """Store a new key; returns (row, the key in clear text — shown once, never stored)."""
    check_new_key(name, role, team)
    key_id = secrets.token_hex(6)
    key = f"{KEY_PREFIX}_{key_id}_{secrets.token_urlsafe(32)}"
    row = ApiKey(id=key_id, name=name, key_hash=hash_key(key), role=role, team=team, created_at=utcnow())
    session.add(row)
    session.commit()
    return row, key


def key_count(session: Session) -> int:
    return session.scalar(select(func.count(ApiKey.id))) or 0


def active_admins(session: Session) -> int:
    return session.scalar(select(func.count(ApiKey.id)).where(ApiKey.role == ADMIN, ApiKey.revoked_at.is_(None))) or 0


def list_keys(session: Session) -> list[ApiKey]:
    return list(session.scalars(select(ApiKey).order_by(ApiKey.created_at, ApiKey.id)))


def find_key(session: Session, key_id: str) -> ApiKey | None:
    return session.get(ApiKey, key_id) if re.fullmatch(KEY_ID_PATTERN, key_id) else None


def revoke_key(session: Session, key_id: str) -> bool:
    row = find_key(session, key_id)
    if row is None:
        return False
    if row.revoked_at is None:
        row.revoked_at = utcnow()
        session.commit()
    return True


class KeyRejected(Exception):
    """The key is malformed, unknown or revoked; the message says which."""

    def __init__(self, message: str, *, unknown: bool = False) -> None:
        super().__init__(message)
        self.unknown = unknown  # well formed but not in this database: perhaps made in another one


_DUMMY_HASH = hash_key(f"{KEY_PREFIX}_000000000000_{'0' * 43}")  # what an unknown id's key is checked against
_NOT_RECOGNISED = "API key not recognised: check it, or create one with `cudamaster keys create`"


def matches(stored_hash: str, key: str) -> bool:
    """Whether `key` is the key whose hash is `stored_hash` (constant time)."""
    return hmac.compare_digest(stored_hash, hash_key(key))


def key_id_of(key: str) -> str | None:
    """The id part of a well-formed key (`cm_<id>_<secret>`), or None."""
    parts = key.split("_", 2)
    if len(parts) != 3 or parts[0] != KEY_PREFIX or not parts[2] or not re.fullmatch(r"[0-9a-f]{1,32}", parts[1]):
        return None
    return parts[1]


def verify_key(session: Session, key: str) -> ApiKey:
    parts = key.split("_", 2)
    if len(parts) != 3 or parts[0] != KEY_PREFIX or not parts[1] or not parts[2]:
        raise KeyRejected("malformed API key: expected cm_<id>_<secret> as printed by `cudamaster keys create`")
    key_id = key_id_of(key)
    row = session.get(ApiKey, key_id) if key_id is not None else None
    # The same hash check for an unknown id as for a known one.
    if not matches(row.key_hash if row is not None else _DUMMY_HASH, key) or row is None:
        raise KeyRejected(_NOT_RECOGNISED, unknown=True)
    if row.revoked_at is not None:
        raise KeyRejected(f"API key {row.id} was revoked at {row.revoked_at.isoformat()}; create a new one with `cudamaster keys create`")
    return row
