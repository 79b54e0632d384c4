"""The job page's export button (issue 41) in a REAL headless Chromium against the REAL service (FAKE agent), on
SQLite: a viewer of the job's team downloads the best attempt's bundle. The routes and each key's answers on both
databases: test_export.py (the page links to the same GET /api/v1/jobs/{id}/export, with the page's session)."""

from __future__ import annotations

import io
import zipfile

import pytest

from app.db.engine import make_engine, make_sessionmaker
from bench_tasks.spec import load_task
from tests.support import export_jobs as ej

from . import browser
from .conftest import make_key, sqlite_only

pytestmark = [
    pytest.mark.timeout(300),
    pytest.mark.slow,
    pytest.mark.skipif(browser.missing() is not None, reason=str(browser.missing())),
    sqlite_only,
]


def test_job_page_exports_the_best_kernel_as_a_zip_FAKE(db_url, server_factory):
    owner = make_key(db_url, "owner", role="member", team="red")
    viewer = make_key(db_url, "viewer", role="viewer", team="red")
    engine = make_engine(db_url)
    with make_sessionmaker(engine)() as session:
        case = ej.CASES[0]
        sizes = load_task(case.task).size_list("paper")
        job = ej.store_job(
            session,
            task=case.task,
            precision=case.precision,
            source=case.source(),
            evaluation=ej.fake_evaluation(case.task, case.precision, sizes),
            api_key_id=owner.split("_")[1],
            team="red",
        )
        job_id, best = job.id, job.best_attempt_id
        wrong = next(a.id for a in job.attempts if a.verdict != "ok")
    engine.dispose()
    server = server_factory()
    with browser.chromium() as chromium:
        context = chromium.new_context(accept_downloads=True)
        page = context.new_page()
        page.set_default_timeout(60_000)
        browser.sign_in(page, server.url, viewer)
        page.goto(f"{server.url}/jobs/{job_id}")
        with page.expect_download() as info:
            page.click("#export-bundle")
        download = info.value
        assert download.suggested_filename == f"vector_add_fp32_{job_id}_a{best}.zip"
        with zipfile.ZipFile(io.BytesIO(open(download.path(), "rb").read())) as z:
            kernel = z.read(f"vector_add_fp32_{job_id}_a{best}/kernel.cu").decode()
        assert kernel == case.source()
        # The wrong attempt's page has no button (nothing correct to export).
        page.goto(f"{server.url}/jobs/{job_id}?attempt={wrong}")
        assert page.locator("#attempt h2").count() == 1
        assert page.locator("#export-bundle").count() == 0
        context.close()
