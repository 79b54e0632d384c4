"""The dashboard, round two (issue 43): the layout a person sees, in a REAL headless Chromium against the REAL
`cudamaster serve` process (the FAKE scripted agent of fake_agent.py), on SQLite.

- the jobs list fits 1280 px, one line a row, "Submitted (UTC)" whole, with a long Models value (item 1);
- at 390 px: Status and Best P in view without sideways scrolling, the P chart keeps its x ticks (item 9);
- the costs chart: a day axis up to today, its ticks on days (item 4);
- empty states: a job without attempts shows one line, not three empty charts; an empty list no compare button
  and no "0–0 of 0" (item 10)."""

from __future__ import annotations

import httpx
import pytest

from . import browser
from .conftest import make_key, sqlite_only, wait_status

pytestmark = [
    pytest.mark.timeout(300),
    pytest.mark.slow,
    pytest.mark.skipif(browser.missing() is not None, reason=str(browser.missing())),
    sqlite_only,
]
API = "/api/v1"
MODELS = {"planner": "fake-planner-model-long", "coder": "fake-coder-model-long", "compiler": "fake-compiler", "debugger": "fake-debugger"}
DAY = 86400


@pytest.fixture(scope="module")
def chromium():
    with browser.chromium() as b:
        yield b


def _page(chromium, server, key: str, width: int):
    context = chromium.new_context(viewport={"width": width, "height": 800}, bypass_csp=True)
    page = context.new_page()
    page.set_default_timeout(60_000)
    browser.sign_in(page, server.url, key)
    return page


def _box(page, selector: str) -> dict:
    box = page.locator(selector).first.bounding_box()
    assert box is not None, selector
    return box


def test_FAKE_jobs_list_fits_1280_and_390_px_and_the_charts_keep_their_ticks(db_url, server_factory, chromium):
    key = make_key(db_url, "alice", role="member")
    server = server_factory(FAKE_AGENT_STEP_SECONDS="0")
    with httpx.Client(base_url=server.url, headers={"X-API-Key": key}, timeout=60) as client:
        ids = []
        for _ in range(12):  # one at a time: the key's in-flight limit
            ids.append(client.post(f"{API}/jobs", json={"task": "vector_add", "rounds": 3, "debug": 1, "models": MODELS}).json()["id"])
            wait_status(client, f"{API}/jobs/{ids[-1]}", {}, {"finished"})

    wide = _page(chromium, server, key, 1280)
    wide.goto(f"{server.url}/jobs")
    assert wide.evaluate("document.documentElement.scrollWidth") <= 1280
    assert _box(wide, "#jobs-table thead th:last-child")["x"] + _box(wide, "#jobs-table thead th:last-child")["width"] <= 1280
    heights = {round(_box(wide, f"tr[data-job='{j}']")["height"]) for j in ids}
    line = wide.evaluate("parseFloat(getComputedStyle(document.body).lineHeight)")
    assert max(heights) < 2 * line, heights  # one line a row: the Models cell is clipped, not wrapped
    models = wide.locator(f"tr[data-job='{ids[0]}'] [data-field=models]")
    assert models.get_attribute("title") == models.text_content()  # the whole value on hover

    narrow = _page(chromium, server, key, 390)
    narrow.goto(f"{server.url}/jobs")
    assert narrow.evaluate("document.documentElement.scrollWidth") <= 390
    assert narrow.evaluate(
        "(() => { const s = document.querySelector('#jobs-table').parentElement; return s.scrollWidth <= s.clientWidth; })()"
    )
    for field in ("status", "best_score"):
        box = _box(narrow, f"tr[data-job='{ids[0]}'] [data-field={field}]")
        assert box["x"] >= 0 and box["x"] + box["width"] <= 390, (field, box)
    narrow.goto(f"{server.url}/jobs/{ids[0]}")
    narrow.wait_for_function("window.cmCharts && window.cmCharts.score")
    ticks = narrow.evaluate("window.cmCharts.score.axes[0]._values.filter((v) => v !== '')")
    assert len(ticks) >= 2, ticks

    wide.goto(f"{server.url}/costs")
    wide.wait_for_function("window.cmCharts && window.cmCharts.costs")
    today = wide.evaluate("Date.parse(document.getElementById('chart-costs').dataset.today + 'T00:00:00Z') / 1000")
    scale = wide.evaluate("[window.cmCharts.costs.scales.x.min, window.cmCharts.costs.scales.x.max]")
    splits = wide.evaluate("window.cmCharts.costs.axes[0]._splits")
    assert scale[1] <= today + DAY / 2  # no future day
    assert splits and all(s % DAY == 0 for s in splits), splits  # ticks on days, never hours
    assert scale[1] - scale[0] >= 7 * DAY - 1  # a week at least, ending today


def test_FAKE_empty_states_say_one_thing_once(db_url, server_factory, chromium):
    key = make_key(db_url, "alice", role="member")
    loner = make_key(db_url, "lone", role="member", team="empty-team")
    server = server_factory(FAKE_AGENT_STEP_SECONDS="0")
    with httpx.Client(base_url=server.url, headers={"X-API-Key": key}, timeout=60) as client:
        job_id = client.post(f"{API}/jobs", json={"task": "vector_add", "rounds": 2, "manual": True}).json()["id"]
        job = wait_status(client, f"{API}/jobs/{job_id}", {}, {"waiting_for_input"})
        assert job["attempts"] == []

    page = _page(chromium, server, key, 1280)
    page.goto(f"{server.url}/jobs/{job_id}")
    assert page.locator("#no-charts").is_visible() and not page.locator("#job-charts").is_visible()
    assert page.locator(".nodata:visible").count() == 0

    empty = _page(chromium, server, loner, 1280)
    empty.goto(f"{server.url}/jobs")
    assert empty.locator("tr.no-rows").is_visible()
    assert not empty.locator("#compare-form").is_visible()
    assert "0–0 of 0" not in empty.locator(".pager").inner_text()
