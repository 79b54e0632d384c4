"""Dashboard sign-in: an API key is exchanged for a signed session cookie.

The cookie holds the key's id and the session's CSRF token, signed (itsdangerous) with the service's
session secret (CUDAMASTER_SERVICE__SESSION_SECRET, or one generated once and kept in the database so that
replicas share it); never the key itself. It is HttpOnly and SameSite=Lax, Secure over HTTPS, and
expires after CUDAMASTER_SERVICE__SESSION_MAX_AGE_S. Every request re-reads the key: a revoked key's sessions
end at once, and a changed role applies at once. Every form carries the session's CSRF token (the
sign-in form a token of its own, bound to a pre-session cookie).
"""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass

from fastapi import Request, Response
from itsdangerous import BadSignature, URLSafeTimedSerializer
from sqlalchemy import select

from ..db.models import ApiKey, ServiceSecret
from ..db.types import utcnow
from ..permissions import Caller
from ..store.upsert import insert_ignore

SESSION_COOKIE = "cm_session"
LOGIN_COOKIE = "cm_login"
_SECRET_NAME = "dashboard_session"


@dataclass(frozen=True)
class WebSession:
    caller: Caller
    csrf: str


def _secret(request: Request) -> str:
    state = request.app.state
    cached = getattr(state, "session_secret", None)
    if cached:
        return cached
    configured = state.settings.session_secret
    if configured is not None and configured.get_secret_value():
        value = configured.get_secret_value()
    else:
        with state.sessions() as session:  # generated once per database; replicas read the same row
            insert_ignore(
                session, ServiceSecret, {"name": _SECRET_NAME, "value": secrets.token_urlsafe(48), "created_at": utcnow()}, ["name"]
            )
            session.commit()
            value = session.scalar(select(ServiceSecret.value).where(ServiceSecret.name == _SECRET_NAME))
    state.session_secret = value
    return value


def _serializer(request: Request, salt: str) -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(_secret(request), salt=salt)


def _set_cookie(request: Request, response: Response, name: str, value: str, max_age: int) -> None:
    response.set_cookie(name, value, max_age=max_age, httponly=True, samesite="lax", secure=request.url.scheme == "https", path="/")


def current(request: Request) -> WebSession | None:
    """The signed-in key (re-read from the database), or None."""
    raw = request.cookies.get(SESSION_COOKIE)
    if not raw:
        return None
    try:
        data = _serializer(request, "session").loads(raw, max_age=request.app.state.settings.session_max_age_s)
    except BadSignature:  # also expired (SignatureExpired is a BadSignature)
        return None
    if not isinstance(data, dict) or not isinstance(data.get("k"), str) or not isinstance(data.get("c"), str):
        return None
    with request.app.state.sessions() as session:
        key = session.get(ApiKey, data["k"])
        if key is None or key.revoked_at is not None:
            return None
        return WebSession(Caller.of(key), data["c"])


def sign_in(request: Request, response: Response, key: ApiKey) -> None:
    token = _serializer(request, "session").dumps({"k": key.id, "c": secrets.token_urlsafe(24)})
    _set_cookie(request, response, SESSION_COOKIE, token, request.app.state.settings.session_max_age_s)
    response.delete_cookie(LOGIN_COOKIE, path="/")


def sign_out(response: Response) -> None:
    response.delete_cookie(SESSION_COOKIE, path="/")


def set_login_cookie(request: Request, response: Response, token: str) -> None:
    """Bind the sign-in form's CSRF token to a short-lived pre-session cookie."""
    _set_cookie(request, response, LOGIN_COOKIE, _serializer(request, "login").dumps(token), 3600)


def login_token_ok(request: Request, token: str) -> bool:
    raw = request.cookies.get(LOGIN_COOKIE)
    if not raw or not token:
        return False
    try:
        expected = _serializer(request, "login").loads(raw, max_age=3600)
    except BadSignature:
        return False
    return isinstance(expected, str) and hmac.compare_digest(expected, token)


def csrf_ok(web: WebSession, token: str) -> bool:
    return bool(token) and hmac.compare_digest(web.csrf, token)
