"""The team dashboard, served by the service itself at `/`: server-side Jinja2 pages (app/web/pages.py;
the campaigns' in app/web/campaign_pages.py), own JS and CSS, and vendored browser libraries under
static/ (uPlot for charts; swagger-ui and Redoc for the API docs). Nothing is loaded from a CDN."""

from __future__ import annotations

from fastapi import FastAPI

from . import campaign_pages, compare_pages, docs, pages, static_files

STATIC = static_files.STATIC


def mount(app: FastAPI, api_prefix: str) -> None:
    app.mount("/static", static_files.app(), name="static")
    app.include_router(docs.router(app, api_prefix))
    app.include_router(pages.router)
    app.include_router(campaign_pages.router)
    app.include_router(compare_pages.router)
    pages.install_handlers(app)
