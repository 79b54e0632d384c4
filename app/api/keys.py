"""API keys over HTTP: create, list and revoke (admin keys only), and `GET /keys/me` for any key.

The same operations as `cudamaster keys create|list|revoke`, which work on the database directly
(and may make the first key of an empty database an admin)."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Literal

from fastapi import APIRouter, HTTPException, Path
from pydantic import BaseModel, ConfigDict, Field

from .. import auth
from ..bounds import KEY_ID_PATTERN, TEAM_PATTERN, RequestBody
from ..db.models import ADMIN, DEFAULT_TEAM, ApiKey
from .deps import Admin, KeyHolder, SessionDep
from .errors import responses, unprocessable

router = APIRouter(prefix="/keys", tags=["keys"])

Role = Literal["admin", "member", "reviewer", "viewer"]


class KeyCreate(RequestBody):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, max_length=128, pattern=r"^[^\x00-\x1f]+$", description="who the key is for")
    role: Role = Field(
        "member",
        description="admin: everything, every team; member: its team's jobs, acts on its own; "
        "reviewer: a member that also accepts or rejects its team's flagged attempts; viewer: reads its team's jobs",
    )
    team: str = Field(DEFAULT_TEAM, max_length=64, pattern=TEAM_PATTERN, description="keys of a team read the team's jobs")


class KeyOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)
    id: str = Field(description="the public part of the key (cm_<id>_…)")
    name: str
    role: Role
    team: str
    created_at: datetime
    revoked_at: datetime | None
    last_submit_at: datetime | None


class KeyCreated(KeyOut):
    key: str = Field(description="the key itself: shown once, stored only as a hash")


KeyId = Annotated[str, Path(max_length=32, description="the key id (12 hex digits)")]


@router.get("/me", response_model=KeyOut, summary="The key this request came with", responses=responses(401, 403))
def whoami(session: SessionDep, caller: KeyHolder) -> KeyOut:
    row = session.get(ApiKey, caller.key_id)
    assert row is not None
    return KeyOut.model_validate(row)


@router.get("", response_model=list[KeyOut], summary="List every key (admin)", responses=responses(401, 403))
def list_keys(session: SessionDep, _admin: Admin) -> list[KeyOut]:
    return [KeyOut.model_validate(row) for row in auth.list_keys(session)]


@router.post("", status_code=201, response_model=KeyCreated, summary="Create a key (admin)", responses=responses(400, 401, 403, 413))
def create_key(body: KeyCreate, session: SessionDep, _admin: Admin) -> KeyCreated:
    try:
        row, key = auth.create_key(session, body.name, role=body.role, team=body.team)
    except auth.KeyInvalid as exc:
        raise unprocessable(("body",), str(exc)) from None
    return KeyCreated.model_validate({**KeyOut.model_validate(row).model_dump(), "key": key})


@router.post(
    "/{key_id}/revoke",
    response_model=KeyOut,
    summary="Revoke a key (admin): it gets 403 from now on",
    responses=responses(401, 403, 404, 409),
)
def revoke_key(key_id: KeyId, session: SessionDep, _admin: Admin) -> KeyOut:
    row = session.get(ApiKey, key_id) if re.fullmatch(KEY_ID_PATTERN, key_id) else None
    if row is None:
        raise HTTPException(404, f"no key {key_id[:32]!r}; GET /api/v1/keys lists them")
    if row.role == ADMIN and row.revoked_at is None and auth.active_admins(session) <= 1:
        raise HTTPException(
            409,
            f"key {row.id} is the last active admin key: create another admin first "
            "(POST /api/v1/keys with role admin), or revoke it with `cudamaster keys revoke`",
        )
    auth.revoke_key(session, key_id)
    session.refresh(row)
    return KeyOut.model_validate(row)
