"""The comparison pages in a REAL headless Chromium against the REAL service process (uvicorn, the FAKE
agent of fake_agent.py): a person ticks jobs (or campaigns) in the list, presses Compare, and reads the
overlaid charts (their data is compared with the API's numbers), the tables and the diff; the page loads
nothing from elsewhere and breaks no rule of its content security policy; another team's key gets the
same 404 page as for a missing run. On SQLite: the comparisons' queries on PostgreSQL are test_compare_api.py's
(both databases)."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

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
CHARTS = (
    """() => Object.fromEntries(Object.entries(window.cmCharts).map(([k, u]) => [k, {data: u.data, labels: u.series.map(s => s.label)}]))"""
)


@pytest.fixture(scope="module")
def chromium():
    with browser.chromium() as b:
        yield b


def _page(chromium, *, bypass_csp: bool):
    # bypass_csp: Playwright evaluates its test expressions with eval, which the pages' CSP forbids.
    context = chromium.new_context(viewport={"width": 1280, "height": 800}, bypass_csp=bypass_csp)
    page = context.new_page()
    page.set_default_timeout(60_000)
    page.requests, page.errors = [], []  # type: ignore[attr-defined]
    context.on("request", lambda r: page.requests.append(r.url))
    page.on("console", lambda m: page.errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    return context, page


def _only_local(page, server) -> None:
    assert [u for u in page.requests if not u.startswith(server.url) and not u.startswith("data:")] == []


def test_compare_jobs_from_the_jobs_list_with_fake_agent(db_url, server_factory, chromium):
    owner, outsider = make_key(db_url, "alice", role="member", team="red"), make_key(db_url, "bob", role="member", team="blue")
    server = server_factory(FAKE_AGENT_STEP_SECONDS="0.02")
    with httpx.Client(base_url=server.url, headers={"X-API-Key": owner}, timeout=30) as client:
        ids = [
            client.post(f"{API}/jobs", json={"task": t, "rounds": r}).json()["id"]
            for t, r in (("vector_add", 1), ("vector_add", 3), ("RELU", 1))
        ]
        for job_id in ids:
            wait_status(client, f"{API}/jobs/{job_id}", {}, {"finished"})
        job = client.get(f"{API}/jobs/{ids[1]}").json()

    context, page = _page(chromium, bypass_csp=True)
    browser.sign_in(page, server.url, owner)
    page.goto(f"{server.url}/jobs")
    page.check(f"tr[data-job='{ids[0]}'] input[name=ids]")
    page.check(f"tr[data-job='{ids[1]}'] input[name=ids]")
    page.click("#compare-form button[type=submit]")
    page.wait_for_url(re.compile(r"/compare/jobs\?"))
    picked = parse_qs(urlsplit(page.url).query)["ids"]  # in the list's order (newest first)
    assert sorted(picked) == sorted(ids[:2])
    api = httpx.get(f"{server.url}{API}/compare/jobs", params={"ids": ",".join(picked)}, headers={"X-API-Key": owner}).json()
    page.wait_for_function("window.cmCharts && window.cmCharts.compare_speedup && window.cmCharts.compare_roofline")
    charts = page.evaluate(CHARTS)
    assert charts["compare_speedup"]["data"][0] == [s["size"] for s in api["sizes"]] == [1024, 65536]
    for i, run in enumerate(api["runs"]):
        assert charts["compare_speedup"]["labels"][i + 1].startswith(run["job_id"])
        assert charts["compare_speedup"]["data"][i + 1] == pytest.approx([s["speedup"] for s in run["sizes"]])
        assert charts["compare_roofline"]["data"][i + 1] == pytest.approx([s["roofline_pct"] for s in run["sizes"]])
    # The legend holds values before any hover: the largest size's.
    legend = page.locator("#chart-compare-speedup .u-legend .u-value").all_text_contents()
    assert legend == ["N=65536"] + [f"{r['sizes'][-1]['speedup']:.3f}×" for r in api["runs"]]
    scores = page.locator("#runs-table tr[data-row=score] td").all_text_contents()
    assert scores == [f"{r['score']:.3f}" for r in api["runs"]] and sorted(scores) == ["2.000", "4.000"]
    assert "dram_pct" in page.text_content("#metrics-table") and "memory_bandwidth" in page.text_content("#metrics-table")
    diff = page.text_content("#diffs")
    assert "+// fake kernel, round 1" in diff and "-// fake kernel, round 3" in diff  # the newest job (R=3) is the reference
    assert page.errors == []
    _only_local(page, server)

    # Two attempts of one job, from the job page's link (this attempt against the previous best).
    page.goto(f"{server.url}/jobs/{ids[1]}")
    page.click("#compare-attempts")
    page.wait_for_url(re.compile(r"/compare/attempts\?ids="))
    numbers = [a["id"] for a in job["attempts"]]
    assert page.url.endswith(f"ids={numbers[1]},{numbers[2]}")
    assert "attempt #2" in page.text_content("#runs-table thead") and "attempt #3" in page.text_content("#runs-table thead")

    # Jobs of different tasks: the styled page says what to pick.
    page.goto(f"{server.url}/jobs")
    page.check(f"tr[data-job='{ids[0]}'] input[name=ids]")
    page.check(f"tr[data-job='{ids[2]}'] input[name=ids]")
    page.click("#compare-form button[type=submit]")
    assert "pick runs of one task and one precision" in page.text_content("#problem")
    context.close()

    context, page = _page(chromium, bypass_csp=True)
    browser.sign_in(page, server.url, outsider)
    response = page.goto(f"{server.url}/compare/jobs?ids={ids[0]},{ids[1]}")
    assert response.status == 404 and f"no job '{ids[0]}'" in page.text_content("#problem")
    context.close()


def test_compare_campaigns_from_the_campaigns_list_with_fake_agent(db_url, server_factory, chromium):
    owner = make_key(db_url, "alice", role="member", team="red")
    server = server_factory(FAKE_AGENT_VARIED="1", FAKE_AGENT_STEP_SECONDS="0", CUDAMASTER_SERVICE__MAX_RUNNING_JOBS="4")
    variants = ["vector_add/fp32", "RELU/fp32", "softmax/fp32"]
    with httpx.Client(base_url=server.url, headers={"X-API-Key": owner}, timeout=30) as client:
        ids = []
        for mode in ("none", "full", "filtered"):
            body = {
                "name": f"profile {mode}",
                "selection": {"variants": variants},
                "config": {"rounds": 2, "debug": 0, "profile_mode": mode},
            }
            ids.append(client.post(f"{API}/campaigns", json=body).json()["id"])
        for cid in ids:
            wait_status(client, f"{API}/campaigns/{cid}", {}, {"finished"}, timeout=120)

    context, page = _page(chromium, bypass_csp=True)
    browser.sign_in(page, server.url, owner)
    page.goto(f"{server.url}/campaigns")
    for cid in ids:
        page.check(f"tr[data-campaign='{cid}'] input[name=ids]")
    page.click("#compare-form button[type=submit]")
    page.wait_for_url(re.compile(r"/compare/campaigns\?"))
    picked = parse_qs(urlsplit(page.url).query)["ids"]
    assert picked == ids[::-1]  # in the list's order, newest first
    api = httpx.get(f"{server.url}{API}/compare/campaigns", params={"ids": ",".join(picked)}, headers={"X-API-Key": owner}).json()
    page.wait_for_function("window.cmCharts && window.cmCharts.compare_success")
    chart = page.evaluate(CHARTS)["compare_success"]
    assert chart["data"][0] == list(range(len(api["taus"])))
    for i, c in enumerate(api["campaigns"]):
        assert chart["labels"][i + 1] == f"{c['name']} ({c['profile_tokens']['mode']})"
        assert chart["data"][i + 1] == pytest.approx([100 * x for x in c["success"]])
    modes = page.locator("#ablation-table tr[data-row=profile_mode] td").all_text_contents()
    assert modes == ["filtered", "full", "none"]
    tokens = page.locator("#ablation-table tr[data-row=profile_tokens] td").all_text_contents()
    assert tokens == [f"{c['profile_tokens']['tokens_sent']:,}" for c in api["campaigns"]]
    assert page.locator("#ablation-table tr[data-row=transition]").count() == len(api["transitions"]) > 0
    assert page.locator("#modes-table tbody tr").count() == 3
    _only_local(page, server)
    context.close()

    # Under the page's own content security policy: nothing refused, the chart drawn.
    context, page = _page(chromium, bypass_csp=False)
    browser.sign_in(page, server.url, owner)
    page.goto(f"{server.url}/compare/campaigns?ids={','.join(ids)}")
    page.wait_for_selector("#chart-compare-success .uplot")
    assert page.errors == []
    context.close()
