"""The API docs pages (swagger-ui at /api/v1/docs, Redoc at /api/v1/redoc) with their scripts and styles
served from the package (static/vendor), so they work on an offline network."""

from __future__ import annotations

from fastapi import APIRouter, FastAPI
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse

SWAGGER = "/static/vendor/swagger-ui-dist-5.35.0"
REDOC = "/static/vendor/redoc-3.0.1"
FAVICON = "/static/favicon.svg"


def router(app: FastAPI, api_prefix: str) -> APIRouter:
    r = APIRouter(include_in_schema=False)

    @r.get(f"{api_prefix}/docs")
    def swagger() -> HTMLResponse:
        return get_swagger_ui_html(openapi_url=app.openapi_url or "", title=f"{app.title} API",
                                   swagger_js_url=f"{SWAGGER}/swagger-ui-bundle.js", swagger_css_url=f"{SWAGGER}/swagger-ui.css",
                                   swagger_favicon_url=FAVICON)

    @r.get(f"{api_prefix}/redoc")
    def redoc() -> HTMLResponse:
        return get_redoc_html(openapi_url=app.openapi_url or "", title=f"{app.title} API", redoc_js_url=f"{REDOC}/redoc.standalone.js",
                              redoc_favicon_url=FAVICON, with_google_fonts=False)

    return r
