"""API keys: who a request comes from (`authenticate`, with failed attempts throttled and logged), and the keys'
management (list, create, revoke: admin keys only, checked by the routes), for the API's routes and the dashboard.

Failed authentications are counted per key id and per client address (CUDAMASTER_SERVICE__MAX_AUTH_FAILURES_PER_
MINUTE_PER_KEY and _PER_ADDRESS, app/limits.py): past either limit the key id or the address gets TooMany (429 with
Retry-After) before its key is even checked, for the rest of that minute. Each failure is logged with the key id
(the public part; never the secret) and the address."""

from __future__ import annotations

import logging
import math

from sqlalchemy.orm import Session

from settings import ServiceSettings

from .. import auth
from ..db.models import ADMIN, ApiKey
from ..limits import service_limits
from ..permissions import Caller
from ..schemas import KeyCreate, KeyCreated, KeyOut
from .errors import Conflict, Forbidden, Invalid, NotFound, TooMany

log = logging.getLogger("cudamaster.auth")

UNKNOWN_KEY_HINT = (
    " This service reads its keys from its own database (its CUDAMASTER_SERVICE__DATABASE_URL; its start-up log "
    "names it): create a key there with `cudamaster keys create --name NAME --database-url URL`, or give `keys create` "
    "the same CUDAMASTER_SERVICE__DATABASE_URL as the service."
)


def authenticate(session: Session, key: str, address: str | None, settings: ServiceSettings) -> Caller:
    """The caller a key stands for. Forbidden (its message says why and what to do) for a malformed, unknown or
    revoked key; TooMany when its key id or the address failed too often in the last minute."""
    limits = service_limits(settings)
    key_id = auth.key_id_of(key)
    wait = limits.auth_blocked(key_id, address)
    if wait is not None:
        raise TooMany(
            f"too many failed authentications in the last minute for key id {key_id or '(malformed)'} or from this "
            f"address: retry in {math.ceil(wait)} s with a valid key",
            max(1, math.ceil(wait)),
        )
    try:
        return Caller.of(auth.verify_key(session, key))
    except auth.KeyRejected as exc:
        by_key, by_address = limits.auth_failed(key_id, address)
        log.warning(
            "authentication failed: key id %s from %s: %s (failures in the last minute: %d of this key id, %d from this address)",
            key_id or "(malformed)",
            address or "(unknown address)",
            str(exc).split(":")[0],
            by_key,
            by_address,
        )
        raise Forbidden(str(exc) + (UNKNOWN_KEY_HINT if exc.unknown else "")) from None


def still_active(session: Session, caller: Caller) -> bool:
    """Whether the key a long request (an event stream) was opened with is still active: not revoked since, nor gone.
    A caller without a key has none to revoke."""
    if caller.key_id is None:
        return True
    row = session.get(ApiKey, caller.key_id)
    return row is not None and row.revoked_at is None


def me(session: Session, caller: Caller) -> KeyOut:
    row = session.get(ApiKey, caller.key_id)
    if row is None:
        raise NotFound(f"{caller.label} is not a stored key")
    return KeyOut.model_validate(row)


def list_keys(session: Session) -> list[KeyOut]:
    return [KeyOut.model_validate(row) for row in auth.list_keys(session)]


def create(session: Session, body: KeyCreate) -> KeyCreated:
    try:
        row, key = auth.create_key(session, body.name, role=body.role, team=body.team)
    except auth.KeyInvalid as exc:
        raise Invalid(("body",), str(exc)) from None
    return KeyCreated.model_validate({**KeyOut.model_validate(row).model_dump(), "key": key})


def revoke(session: Session, key_id: str) -> KeyOut:
    """Revoke a key (NotFound: no such key; Conflict: the last active admin key)."""
    row = auth.find_key(session, key_id)
    if row is None:
        raise NotFound(f"no key {key_id[:32]!r}; GET /api/v1/keys lists them")
    if row.role == ADMIN and row.revoked_at is None and auth.active_admins(session) <= 1:
        raise Conflict(
            f"key {row.id} is the last active admin key: create another admin first "
            "(POST /api/v1/keys with role admin), or revoke it with `cudamaster keys revoke`"
        )
    auth.revoke_key(session, key_id)
    session.refresh(row)
    return KeyOut.model_validate(row)
