"""The API docs pages (swagger-ui at /api/v1/docs, Redoc at /api/v1/redoc) with their scripts and styles
served from the package (static/vendor), so they work on an offline network."""

from __future__ import annotations

import html

from fastapi import APIRouter, FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse

from .static_files import static_url

SWAGGER = "/static/vendor/swagger-ui-dist-5.35.0"
REDOC = "/static/vendor/redoc-3.0.1"
REDOC_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; "
    "worker-src 'self' blob:; connect-src 'self'"
)
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

    @r.get(f"{api_prefix}/docs")
    def swagger() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=app.openapi_url or "",
            title=f"{app.title} API",
            swagger_js_url=f"{SWAGGER}/swagger-ui-bundle.js",
            swagger_css_url=f"{SWAGGER}/swagger-ui.css",
            swagger_favicon_url=static_url("favicon.svg"),
        )

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
            headers={"Content-Security-Policy": REDOC_CSP},
        )

    return r
