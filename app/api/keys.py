"""API keys over HTTP: create, list and revoke (admin keys only), and `GET /keys/me` for any key.

The same operations as `cudamaster keys create|list|revoke`, which work on the database directly
(and may make the first key of an empty database an admin)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path

from ..schemas import KeyCreate, KeyCreated, KeyOut
from ..services import keys
from .deps import Admin, KeyHolder, SessionDep
from .errors import as_http, responses

router = APIRouter(prefix="/keys", tags=["keys"])

KeyId = Annotated[str, Path(max_length=32, description="the key id (12 hex digits)")]


@router.get("/me", response_model=KeyOut, summary="The key this request came with", responses=responses(401, 403))
def whoami(session: SessionDep, caller: KeyHolder) -> KeyOut:
    with as_http():
        return keys.me(session, caller)


@router.get("", response_model=list[KeyOut], summary="List every key (admin)", responses=responses(401, 403))
def list_keys(session: SessionDep, _admin: Admin) -> list[KeyOut]:
    return keys.list_keys(session)


@router.post("", status_code=201, response_model=KeyCreated, summary="Create a key (admin)", responses=responses(400, 401, 403, 413))
def create_key(body: KeyCreate, session: SessionDep, _admin: Admin) -> KeyCreated:
    with as_http():
        return keys.create(session, body)


@router.post(
    "/{key_id}/revoke",
    response_model=KeyOut,
    summary="Revoke a key (admin): it gets 403 from now on",
    responses=responses(401, 403, 404, 409),
)
def revoke_key(key_id: KeyId, session: SessionDep, _admin: Admin) -> KeyOut:
    with as_http():
        return keys.revoke(session, key_id)
