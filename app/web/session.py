"""Dashboard sign-in: an API key is exchanged for a session, kept server-side, named by a signed cookie.

Each sign-in stores a row of dashboard_sessions (its id: sha256 of a random session token). The cookie holds
that token and the session's CSRF token, signed (itsdangerous) with the service's session secret
(CUDAMASTER_SERVICE__SESSION_SECRET, or one generated once and kept in the database so that replicas share
it); never the key itself. It is HttpOnly and SameSite=Lax, Secure over HTTPS, and expires after
CUDAMASTER_SERVICE__SESSION_MAX_AGE_S. Every request re-reads the session's row and its key:
- logout deletes the row: the cookie, replayed, is signed out (the dashboard's sign-in page, 401 on the API)
  and its CSRF token is refused with it. Logout ends only that session: the same key signed in elsewhere
  (another browser) stays signed in there;
- a revoked key's sessions all end at once, and a changed role applies at once.
Every form carries the session's CSRF token (the sign-in form a token of its own, bound to a pre-session cookie).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass

from fastapi import Request, Response
from itsdangerous import BadSignature, URLSafeTimedSerializer

from ..permissions import Caller
from ..services import web_sessions

SESSION_COOKIE = "cm_session"
LOGIN_COOKIE = "cm_login"
_SECRET_NAME = "dashboard_session"


@dataclass(frozen=True)
class WebSession:
    caller: Caller
    csrf: str
    session_id: str  # the dashboard_sessions row


def _session_id(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


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
            value = web_sessions.shared_secret(session, _SECRET_NAME)
    state.session_secret = value
    return value


def _serializer(request: Request, salt: str) -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(_secret(request), salt=salt)


def _set_cookie(request: Request, response: Response, name: str, value: str, max_age: int) -> None:
    response.set_cookie(name, value, max_age=max_age, httponly=True, samesite="lax", secure=request.url.scheme == "https", path="/")


def current(request: Request) -> WebSession | None:
    """The signed-in key (re-read from the database) of a session that has not ended, or None."""
    raw = request.cookies.get(SESSION_COOKIE)
    if not raw:
        return None
    try:
        data = _serializer(request, "session").loads(raw, max_age=request.app.state.settings.session_max_age_s)
    except BadSignature:  # also expired (SignatureExpired is a BadSignature)
        return None
    if not isinstance(data, dict) or not isinstance(data.get("s"), str) or not isinstance(data.get("c"), str):
        return None  # also a cookie from before sessions were kept server-side: sign in again
    session_id = _session_id(data["s"])
    with request.app.state.sessions() as session:
        caller = web_sessions.signed_in(session, session_id)  # None: ended at logout, expired, or its key revoked
    return None if caller is None else WebSession(caller, data["c"], session_id)


def sign_in(request: Request, response: Response, key_id: str) -> None:
    """Start a session for the key `key_id` (a row of dashboard_sessions) and set its cookie; expired rows are dropped."""
    token, max_age = secrets.token_urlsafe(32), request.app.state.settings.session_max_age_s
    with request.app.state.sessions() as session:
        web_sessions.open_session(session, _session_id(token), key_id, max_age)
    cookie = _serializer(request, "session").dumps({"s": token, "c": secrets.token_urlsafe(24)})
    _set_cookie(request, response, SESSION_COOKIE, cookie, max_age)
    response.delete_cookie(LOGIN_COOKIE, path="/")


def sign_out(request: Request, response: Response, web: WebSession) -> None:
    """End this session (its row is deleted: the cookie, replayed, no longer signs in) and clear its cookie."""
    with request.app.state.sessions() as session:
        web_sessions.end_session(session, web.session_id)
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
