"""The API docs pages (swagger-ui at /api/v1/docs, Redoc at /api/v1/redoc) with their scripts and styles
served from the package (static/vendor), so they work on an offline network. Both send a Content-Security-Policy
(no inline script: each is started by a file of static/), and the OpenAPI document they read is sent gzipped to a
client that accepts it (about 1/8 of its size)."""

from __future__ import annotations

import gzip
import html
import json
from functools import cache

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from .static_files import static_url

SWAGGER = "/static/vendor/swagger-ui-dist-5.35.0"
REDOC = "/static/vendor/redoc-3.0.1"
REDOC_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; "
    "worker-src 'self' blob:; connect-src 'self'"
)
SWAGGER_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title><link rel="icon" href="{favicon}"><link rel="stylesheet" href="{css}"></head>
<body><noscript>swagger-ui needs JavaScript; the OpenAPI document is at {spec}.</noscript>
<div id="swagger-ui" data-spec-url="{spec}"></div>
<script src="{bundle}"></script>
<script src="{init}"></script>
</body></html>
"""
REDOC_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title><link rel="icon" href="{favicon}"><style>body {{ margin: 0; padding: 0; }}</style></head>
<body><noscript>Redoc needs JavaScript; the OpenAPI document is at {spec}.</noscript>
<div id="redoc" data-spec-url="{spec}"></div>
<script type="module" src="{init}"></script>
</body></html>
"""


def router(app: FastAPI, api_prefix: str) -> APIRouter:
    r = APIRouter(include_in_schema=False)

    @r.get("/docs")
    @r.get("/redoc")
    def guessed(request: Request) -> RedirectResponse:
        """A FastAPI user's first guesses: the API's own pages."""
        return RedirectResponse(f"{api_prefix}{request.url.path}", status_code=307)

    @r.get(f"{api_prefix}/docs")
    def swagger() -> HTMLResponse:
        page = SWAGGER_PAGE.format(
            title=html.escape(f"{app.title} API"),
            spec=html.escape(app.openapi_url or ""),
            favicon=static_url("favicon.svg"),
            css=f"{SWAGGER}/swagger-ui.css",
            bundle=f"{SWAGGER}/swagger-ui-bundle.js",
            init=static_url("swagger-init.js"),
        )
        return HTMLResponse(page, headers={"Content-Security-Policy": REDOC_CSP, "X-Content-Type-Options": "nosniff"})

    @r.get(f"{api_prefix}/redoc")
    def redoc() -> HTMLResponse:
        # Redoc 3 is an ES module (FastAPI's get_redoc_html loads a classic script) and reports telemetry unless told
        # not to: static/redoc-init.js starts it with telemetry off.
        # Its sidebar's Redocly logo is an inline SVG (the vendored bundle is patched: vendor/redoc-3.0.1/SOURCE.txt), not a CDN image.
        return HTMLResponse(
            REDOC_PAGE.format(
                title=html.escape(f"{app.title} API"),
                spec=html.escape(app.openapi_url or ""),
                favicon=static_url("favicon.svg"),
                init=static_url("redoc-init.js"),
            ),
            headers={"Content-Security-Policy": REDOC_CSP, "X-Content-Type-Options": "nosniff"},
        )

    return r


def compress_openapi(app: FastAPI) -> None:
    """Serve the OpenAPI document gzipped to clients that accept it (FastAPI's own route sends it plain, ~200 KB)."""
    url = app.openapi_url
    if not url:
        return

    @cache
    def document() -> tuple[bytes, bytes]:
        body = json.dumps(app.openapi(), separators=(",", ":")).encode()
        return body, gzip.compress(body, 6)

    async def openapi(request: Request) -> Response:
        plain, packed = document()
        headers = {"Vary": "Accept-Encoding", "X-Content-Type-Options": "nosniff"}
        if "gzip" in request.headers.get("accept-encoding", ""):
            return Response(packed, media_type="application/json", headers=headers | {"Content-Encoding": "gzip"})
        return Response(plain, media_type="application/json", headers=headers)

    app.router.routes[:] = [route for route in app.router.routes if getattr(route, "path", None) != url]
    app.add_api_route(url, openapi, include_in_schema=False, methods=["GET"])
