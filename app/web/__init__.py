"""The team dashboard, served by the service itself at `/`: server-side Jinja2 pages split by area
(base.py: what they share; auth_pages, jobs_pages, job_pages, insight_pages, campaign_pages, compare_pages), own JS and CSS, and vendored browser libraries under
static/ (uPlot for charts; swagger-ui and Redoc for the API docs). Nothing is loaded from a CDN."""

from __future__ import annotations

from fastapi import FastAPI

from . import auth_pages, base, campaign_form, campaign_pages, compare_pages, docs, insight_pages, job_pages, jobs_pages, static_files

STATIC = static_files.STATIC


def mount(app: FastAPI, api_prefix: str) -> None:
    app.mount("/static", static_files.app(), name="static")
    app.include_router(docs.router(app, api_prefix))
    docs.compress_openapi(app)
    for pages in (auth_pages, jobs_pages, job_pages, insight_pages):
        app.include_router(pages.router)
    app.include_router(campaign_form.router)  # before campaign_pages: /campaigns/new is not a campaign id
    app.include_router(campaign_pages.router)
    app.include_router(compare_pages.router)
    base.install_handlers(app)
