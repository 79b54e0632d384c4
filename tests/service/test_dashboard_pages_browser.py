"""Issue 31's dashboard items, each checked where a person meets it: in a REAL headless Chromium (or, where
the answer alone says it, over HTTP) against ONE real `cudamaster serve` process with the FAKE scripted
agent (fake_agent.py), on SQLite. One server, one browser and one set of jobs for the whole module:

- job A: vector_add fp32, 2 rounds; job B: RELU bf16, 3 rounds (its attempts' ids follow A's: numbered 1-3 on
  its page); a custom kernel `scale`; a campaign of one variant; a manual-mode job waiting for an answer.
- all by key `alice` (member); `rita` (reviewer, same team) reads them; review threshold 2.5x (rounds 2, 3 flagged).
"""

from __future__ import annotations

import gzip
import re
import time

import httpx
import pytest

from app.web import fmt

from . import browser
from .conftest import Server, make_key, wait_status

pytestmark = [pytest.mark.timeout(300), pytest.mark.slow]
needs_browser = pytest.mark.skipif(browser.missing() is not None, reason=str(browser.missing()))
API = "/api/v1"


def _finished(client: httpx.Client, job_id: str) -> dict:
    return wait_status(client, f"{API}/jobs/{job_id}", {}, {"finished"})


def _stored_custom_job(db_url: str, key: str) -> str:
    """A finished job of the custom kernel `scale`, stored as the API stores one after its baseline check (which
    needs the sandbox and nvcc: not what these tests are about)."""
    from app.db.engine import make_engine, make_sessionmaker
    from app.db.models import CustomTask
    from app.store.jobs import create_job

    from .test_api_with_fake_agent import CUSTOM

    engine = make_engine(db_url)
    try:
        with make_sessionmaker(engine)() as session:
            key_id = key.split("_")[1]
            spec = {k: CUSTOM[k] for k in ("prototype", "args", "sizes")}
            session.add(
                CustomTask(
                    id="ct_00c0ffee00c0ffee",
                    api_key_id=key_id,
                    name=CUSTOM["name"],
                    precision="fp32",
                    spec=spec,
                    baseline_source=CUSTOM["baseline_cu"],
                )
            )
            job = create_job(
                session,
                task="ct_00c0ffee00c0ffee",
                precision="fp32",
                settings={"task": "ct_00c0ffee00c0ffee", "rounds": 1},
                api_key_id=key_id,
            )
            job.status, job.message = "finished", "stored by the test"
            session.commit()
            return job.id
    finally:
        engine.dispose()


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("pages")
    db_url = f"sqlite:///{tmp / 'service.db'}"
    alice = make_key(db_url, "alice", role="member")
    rita = make_key(db_url, "rita", role="reviewer")
    custom_id = _stored_custom_job(db_url, alice)
    server = Server(db_url, tmp, CUDAMASTER_HARNESS__REVIEW_SPEEDUP="2.5", FAKE_AGENT_STEP_SECONDS="0.02").start()
    try:
        with httpx.Client(base_url=server.url, headers={"X-API-Key": alice}, timeout=30) as client:

            def submit(body: dict) -> str:
                r = client.post(f"{API}/jobs", json=body)
                assert r.status_code == 201, r.text
                return r.json()["id"]

            a = _finished(client, submit({"task": "vector_add", "rounds": 2}))
            b = _finished(client, submit({"task": "RELU", "precision": "bf16", "rounds": 3}))
            custom = client.get(f"{API}/jobs/{custom_id}").json()
            r = client.post(
                f"{API}/campaigns", json={"name": "tiny one", "selection": {"variants": ["softmax/fp32"]}, "config": {"rounds": 1}}
            )
            assert r.status_code == 201, r.text
            campaign = r.json()["id"]
            deadline = time.monotonic() + 60
            while (variant := client.get(f"{API}/campaigns/{campaign}").json()["variants"][0])["job_id"] is None:
                assert time.monotonic() < deadline, "the campaign never started its job"
                time.sleep(0.1)
            campaign_job = _finished(client, variant["job_id"])
            manual = wait_status(
                client, f"{API}/jobs/{submit({'task': 'vector_add', 'rounds': 1, 'manual': True})}", {}, {"waiting_for_input"}
            )
        yield {
            "url": server.url,
            "alice": alice,
            "rita": rita,
            "a": a,
            "b": b,
            "custom": custom,
            "campaign": campaign,
            "campaign_job": campaign_job,
            "manual": manual,
        }
    finally:
        server.stop()


@pytest.fixture(scope="module")
def chromium():
    with browser.chromium() as b:
        yield b


@pytest.fixture
def open_page(chromium, site):
    """open_page(key, width=1280): a signed-in page of a fresh context; its console errors and requests are kept."""
    contexts = []

    def open_(key: str, width: int = 1280, height: int = 800):
        # bypass_csp: Playwright evaluates its expressions with eval, which the pages' CSP forbids.
        context = chromium.new_context(viewport={"width": width, "height": height}, bypass_csp=True)
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(30_000)
        page.console_errors = []  # type: ignore[attr-defined]
        page.on("console", lambda m: m.type == "error" and page.console_errors.append(m.text))
        browser.sign_in(page, site["url"], key)
        return page

    yield open_
    for context in contexts:
        context.close()


def _chart(page, name: str) -> dict:
    page.wait_for_function(f"window.cmCharts && window.cmCharts[{name!r}]")
    return page.evaluate(
        f"""(() => {{ const u = window.cmCharts[{name!r}];
        return {{data: u.data, labels: u.series.map(s => s.label), width: u.width, height: u.height,
                 x: [u.scales.x.min, u.scales.x.max], plotLeft: u.bbox.left / devicePixelRatio, plotWidth: u.bbox.width / devicePixelRatio,
                 values: Array.from(u.root.querySelectorAll('.u-legend .u-value')).map(e => e.textContent)}}; }})()"""
    )


# --- 1, 2, 3: charts ---------------------------------------------------------------------------------------


@needs_browser
def test_costs_chart_with_one_day_spans_the_week_up_to_it_with_fake_agent(site, open_page):
    """One day of data (today's) on a week's axis that ends today: no future day (issue 43 item 4)."""
    page = open_page(site["alice"])
    page.goto(f"{site['url']}/costs")
    chart = _chart(page, "costs")
    (day,) = chart["data"][0]  # every call of this module is today's
    lo, hi = chart["x"]
    assert lo < day < hi and hi - lo <= 8 * 86400, f"x axis {lo}..{hi} around one day {day}"
    assert hi - day <= 86400 / 2, "a future day on the axis"
    at = page.evaluate(f"window.cmCharts.costs.valToPos({day}, 'x')")
    assert at / chart["plotWidth"] > 0.75, "today's point is not at the right end"


@needs_browser
def test_job_page_numbers_attempts_per_job_in_rows_legends_and_review_queue_with_fake_agent(site, open_page):
    b = site["b"]
    ids = [a["id"] for a in b["attempts"]]
    assert ids != [1, 2, 3]  # job A's attempts came first: the ids are the database's, not the job's
    page = open_page(site["rita"])
    page.goto(f"{site['url']}/jobs/{b['id']}")
    rows = page.locator("#attempts tbody tr")
    assert [rows.nth(i).locator("td").first.text_content() for i in range(rows.count())] == ["1", "2", "3"]
    assert [rows.nth(i).get_attribute("data-attempt") for i in range(rows.count())] == [str(i) for i in ids]
    labels = _chart(page, "speedup")["labels"]
    assert labels[1:4] == ["attempt 1 (1.0)", "attempt 2 (2.0)", "attempt 3 (3.0)"]
    assert page.text_content("#attempt h2").startswith("Attempt 3 ")  # the best one, shown by default
    timeline = [t.strip() for t in page.locator("#timeline tbody tr td:nth-child(5)").all_text_contents() if t.startswith("attempt")]
    assert [t.split(":")[0] for t in timeline] == ["attempt 1", "attempt 2", "attempt 3"], timeline

    page.goto(f"{site['url']}/reviews")
    card = page.locator(f"article[data-attempt='{ids[1]}'] h2 a")
    assert card.text_content().strip() == "RELU bf16 · attempt 2"


@needs_browser
def test_job_page_charts_at_1280_fit_their_labels_show_values_expand_and_mark_1x_with_fake_agent(site, open_page):
    page = open_page(site["alice"])
    page.goto(f"{site['url']}/jobs/{site['b']['id']}")
    for name in ("score", "speedup", "roofline"):
        chart = _chart(page, name)
        assert chart["width"] >= 500, f"{name}: {chart['width']} px wide"
        assert "--" not in chart["values"], f"{name}: legend {chart['values']} before any hover"
        # Every axis label fits beside its axis (x: the plot's width, y: its height), in the axis' own font.
        fits = page.evaluate(
            f"""(() => {{ const u = window.cmCharts[{name!r}]; const ctx = document.createElement('canvas').getContext('2d');
            return u.axes.map((a, i) => {{ ctx.font = a.labelFont ? a.labelFont[0] : a.font[0];
              const room = (i === 0 ? u.bbox.width : u.bbox.height) / devicePixelRatio;
              return [a.label, ctx.measureText(a.label).width, room]; }}); }})()"""
        )
        for label, width, room in fits:
            assert width <= room, f"{name}: axis label {label!r} is {width:.0f} px in {room:.0f} px"
    speedup = _chart(page, "speedup")
    assert speedup["labels"][-1] == "baseline (1×)" and speedup["data"][-1] == [1] * len(speedup["data"][0])
    largest = [max(a["measurements"], key=lambda m: m["params"]["N"])["speedup"] for a in site["b"]["attempts"]]
    assert speedup["values"][1:4] == [f"{x:,.3f}×" for x in largest]  # each attempt at the largest size, unhovered

    before = _chart(page, "speedup")
    page.click("#chart-speedup >> xpath=.. >> button.expand")
    page.wait_for_function(f"window.cmCharts.speedup.width > {before['width'] + 100}")
    after = _chart(page, "speedup")
    assert after["height"] > before["height"]
    page.click("#chart-speedup >> xpath=.. >> button.expand")
    page.wait_for_function(f"window.cmCharts.speedup.width === {before['width']}")


@needs_browser
def test_leaderboard_bars_of_each_precision_sit_side_by_side_with_fake_agent(site, open_page):
    page = open_page(site["alice"])
    page.goto(f"{site['url']}/leaderboard")
    chart = _chart(page, "shares")
    assert len(chart["labels"]) == 3 and {label.split(" ")[0] for label in chart["labels"][1:]} == {"fp32", "bf16"}
    spans = page.evaluate("window.cmCharts.shares.cmBars")
    first, second = spans["0"], spans["1"]
    assert len(first) == len(second) == 4
    for (a0, a1), (b0, b1) in zip(first, second, strict=True):
        assert a1 <= b0 or b1 <= a0, f"bars {a0}..{a1} and {b0}..{b1} overlap"
    assert "--" not in chart["values"]


# --- 4: API docs -------------------------------------------------------------------------------------------


@needs_browser
def test_redoc_loads_nothing_from_outside_and_logs_no_console_error(site, chromium):
    context = chromium.new_context()  # the page's own CSP applies
    requests: list[str] = []
    errors: list[str] = []
    context.on("request", lambda r: requests.append(r.url))
    page = context.new_page()
    page.on("console", lambda m: m.type == "error" and errors.append(m.text))
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(f"{site['url']}{API}/redoc")
        page.get_by_text("/api/v1/leaderboard", exact=True).first.wait_for(timeout=60_000)
        # The sidebar's logo renders after the first paint (an inline SVG in the vendored bundle): wait until it has
        # loaded (an error removes it, and this wait fails).
        page.wait_for_function(
            "() => { const i = document.querySelector(\"img[alt='redocly logo']\"); return !!i && i.complete && i.naturalWidth > 0; }"
        )
    finally:
        context.close()
    assert [u for u in requests if not u.startswith((site["url"], "data:", "blob:"))] == []
    assert errors == []


# --- 8, 9: jobs list, custom titles, answering ----------------------------------------------------------------


@needs_browser
def test_jobs_list_shows_titles_ids_owners_campaigns_and_a_link_to_the_form_with_fake_agent(site, open_page):
    page = open_page(site["alice"])
    page.goto(f"{site['url']}/jobs")
    custom = site["custom"]
    row = page.locator(f"tr[data-job='{custom['id']}']")
    assert row.locator("td.task a").text_content().strip() == "scale"  # not its ct_ id
    assert row.locator("[data-field=id]").text_content().strip() == custom["id"]
    assert row.locator("[data-field=owner]").text_content().strip() == "alice"
    assert row.locator("[data-field=campaign]").text_content().strip() == "–"
    in_campaign = page.locator(f"tr[data-job='{site['campaign_job']['id']}'] [data-field=campaign] a")
    assert in_campaign.text_content() == "tiny one" and in_campaign.get_attribute("href") == f"/campaigns/{site['campaign']}"
    top = page.locator("#to-submit")
    assert top.get_attribute("href") == "#submit"
    assert top.bounding_box()["y"] < page.locator("#jobs-table").bounding_box()["y"]  # above the table
    page.goto(f"{site['url']}/jobs/{custom['id']}")
    assert page.text_content("h1").strip().startswith("scale")


@needs_browser
def test_waiting_job_shows_the_answer_box_to_its_owner_and_the_reason_to_a_teammate_reviewer_with_fake_agent(site, open_page):
    job_id = site["manual"]["id"]
    owner = open_page(site["alice"])
    owner.goto(f"{site['url']}/jobs/{job_id}")
    assert owner.is_visible("#answer-form textarea[name=answer]")
    reviewer = open_page(site["rita"])
    reviewer.goto(f"{site['url']}/jobs/{job_id}")
    assert reviewer.is_visible("#question") and "round 1" in reviewer.text_content("#question-text")
    assert reviewer.locator("#answer-form").count() == 0
    why = reviewer.text_content("#answer-refused")
    assert "Only the key that submitted this job" in why and "alice" in why and "reviewer" in why


# --- 10: error pages ------------------------------------------------------------------------------------------

HTML = {"Accept": "text/html,application/xhtml+xml"}


def test_browser_routes_answer_errors_with_the_styled_page_and_the_api_keeps_json(site):
    with httpx.Client(base_url=site["url"], timeout=30) as client:
        login = client.get("/login")
        token = re.search(r'name="csrf" value="([^"]+)"', login.text).group(1)
        client.post("/login", data={"key": site["alice"], "csrf": token, "next": "/jobs"})
        bad = client.get("/leaderboard?precision=fp64", headers=HTML)
        assert bad.status_code == 422 and bad.headers["content-type"].startswith("text/html")
        assert 'id="problem"' in bad.text and "precision" in bad.text and "fp32" in bad.text
        defaulted = client.get("/costs?days=abc", headers=HTML)  # a bad window: the default one, said so (issue 43 item 12)
        assert defaulted.status_code == 200 and 'id="days-note"' in defaulted.text
        missing = client.get("/no-such-page", headers=HTML)
        assert missing.status_code == 404 and missing.headers["content-type"].startswith("text/html")
        assert "no page at /no-such-page" in missing.text and 'href="/jobs"' in missing.text
        job = client.get("/jobs/job_0000000000000000", headers=HTML)
        assert job.status_code == 404 and "/jobs" in job.text and "GET /api/v1/jobs" not in job.text
        # Programs keep JSON: the API, and anything asked for without text/html.
        assert client.get(f"{API}/no-such-thing", headers=HTML).json() == {"detail": "Not Found"}
        api_bad = client.get(f"{API}/jobs?limit=abc", headers={"X-API-Key": site["alice"], **HTML})
        assert api_bad.status_code == 422 and api_bad.json()["detail"][0]["loc"] == ["query", "limit"]
        assert client.get("/no-such-page", headers={"Accept": "application/json"}).json() == {"detail": "Not Found"}


# --- 12: one number format ------------------------------------------------------------------------------------


@needs_browser
def test_pages_and_live_updates_write_numbers_one_way_with_fake_agent(site, open_page):
    page = open_page(site["alice"])
    page.goto(f"{site['url']}/jobs")
    values = [0, 1, 3, 3.5, 1234.5678, 0.03, 0.0299, 3300, 1e6 + 0.25, 12.3456]
    js = page.evaluate(f"{values}.map(v => [cmFormat.num(v), cmFormat.p(v), cmFormat.usd(v), cmFormat.pct(v / 100)])")
    assert js == [[fmt.num(v), fmt.p(v), fmt.usd(v), fmt.pct(v / 100)] for v in values]
    b = site["b"]
    shown = page.text_content(f"tr[data-job='{b['id']}'] [data-field=best_score]")
    assert shown == fmt.p(b["best_score"]) == f"{b['best_score']:,.3f}"  # P: 3 decimals on every page
    page.goto(f"{site['url']}/jobs/{b['id']}")
    assert page.text_content("#best-score") == shown
    page.goto(f"{site['url']}/leaderboard")
    cells = page.eval_on_selector_all("#leaderboard tbody tr", "rows => rows.map(r => r.cells[3].textContent)")
    assert cells and all(re.fullmatch(r"\d{1,3}(,\d{3})*\.\d{3}", c) for c in cells), cells


# --- 15: a phone ---------------------------------------------------------------------------------------------


@needs_browser
def test_job_page_at_390_px_scrolls_tables_inside_their_boxes_with_fake_agent(site, open_page):
    page = open_page(site["alice"], width=390, height=844)
    page.goto(f"{site['url']}/jobs/{site['b']['id']}")
    _chart(page, "roofline")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390, "the page is wider than the screen"
    # Every table (the charts' legends aside) sits in a box that scrolls sideways and ends at the screen's edge:
    # a long metric name or strategy widens the table, never the page.
    boxes = page.evaluate(
        """Array.from(document.querySelectorAll('main table:not(.u-legend)')).map(t => {
            let box = t.parentElement;
            while (box && !['auto', 'scroll'].includes(getComputedStyle(box).overflowX)) box = box.parentElement;
            return [t.id || t.className, box ? box.getBoundingClientRect().right : null]; })"""
    )
    assert len(boxes) >= 5 and "metrics" in [name for name, _ in boxes]
    assert [name for name, right in boxes if right is None or right > 390] == []
    page.goto(f"{site['url']}/jobs")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390


# --- 16: static files -----------------------------------------------------------------------------------------


def test_static_files_are_gzipped_and_cached_by_version(site):
    with httpx.Client(base_url=site["url"], timeout=30) as client:
        login = client.get("/login")
        links = re.findall(r'(?:src|href)="(/static/[^"]+)"', login.text)
        ours = [u for u in links if "dashboard.js" in u]
        assert ours and all(re.search(r"\?v=[0-9a-f]{12}$", u) for u in ours), links
        versioned = client.get(ours[0], headers={"Accept-Encoding": "gzip"})
        assert versioned.status_code == 200 and versioned.headers["content-encoding"] == "gzip"
        assert "immutable" in versioned.headers["cache-control"] and "max-age=31536000" in versioned.headers["cache-control"]
        plain = client.get("/static/dashboard.js")
        assert plain.headers["cache-control"] == "no-cache" and plain.content == versioned.content
        assert client.get("/static/dashboard.js", headers={"If-None-Match": plain.headers["etag"]}).status_code == 304
        stale = client.get("/static/dashboard.js?v=000000000000")
        assert stale.headers["cache-control"] == "no-cache"  # an old page's link is not pinned for a year
        raw = client.get(
            "/static/vendor/redoc-3.0.1/redoc.standalone.js", headers={"Accept-Encoding": "gzip"}, extensions={"timeout": {"read": 60}}
        )
        assert "immutable" in raw.headers["cache-control"] and raw.headers["content-encoding"] == "gzip"
        with client.stream("GET", "/static/vendor/redoc-3.0.1/redoc.standalone.js", headers={"Accept-Encoding": "gzip"}) as r:
            wire = b"".join(r.iter_raw())
        assert len(wire) < len(gzip.decompress(wire)) / 2
