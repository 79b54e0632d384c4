"""The dashboard in a REAL headless Chromium against the REAL `cudamaster serve` process (uvicorn, the
FAKE scripted agent of fake_agent.py), on SQLite.

What a person does: sign in with a key, submit a job from the form, watch it change state without a
reload, answer a manual-mode question, cancel and resume, read the plots (their data is compared with
the API's numbers), and what a wrong key and a viewer key get.

The pages store and read through the service the API uses: the same behaviour on PostgreSQL is the API tests'
(both databases): submit, stream and finish, list filters, manual answers, cancel and resume, custom tasks
(test_api_with_fake_agent.py); sessions and cookies (test_dashboard_sessions.py); each key's pages
(test_permissions.py); reviews and the leaderboard (test_insights_api.py); campaigns (test_campaigns_with_fake_agent.py).
"""

from __future__ import annotations

import re
import time

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


@pytest.fixture(scope="module")
def chromium():
    with browser.chromium() as b:
        yield b


@pytest.fixture
def page(chromium):
    # bypass_csp: Playwright evaluates its test expressions with eval, which the pages' CSP forbids.
    context = chromium.new_context(viewport={"width": 1280, "height": 800}, bypass_csp=True)
    requests: list[str] = []
    context.on("request", lambda r: requests.append(r.url))
    pg = context.new_page()
    pg.set_default_timeout(60_000)
    pg.requests = requests  # type: ignore[attr-defined]
    yield pg
    context.close()


def _mark_no_reload(page) -> None:
    page.evaluate("window.__stillTheSamePage = true")


def _still_same_page(page) -> bool:
    return page.evaluate("window.__stillTheSamePage === true")


def test_sign_in_submit_from_form_and_watch_it_live_with_fake_agent(db_url, server_factory, page):
    key = make_key(db_url, "alice", role="member")
    server = server_factory(FAKE_AGENT_STEP_SECONDS="0.6")
    browser.sign_in(page, server.url, key)
    assert page.url.endswith("/jobs")
    assert page.text_content("[data-role]") == "member"

    page.check("input[name=kind][value=task]")
    page.select_option("select[name=task]", "vector_add")
    page.fill("input[name=rounds]", "2")
    page.fill("input[name=debug]", "1")
    page.fill("input[name=model_coder]", "fake-model")
    page.click("#submit-form button[type=submit]")
    page.wait_for_url(re.compile(r"/jobs/job_[0-9a-f]{16}$"))
    job_id = page.url.rsplit("/", 1)[1]

    with httpx.Client(base_url=server.url, headers={"X-API-Key": key}, timeout=30) as client:
        submitted = client.get(f"{API}/jobs/{job_id}").json()
        assert submitted["settings"]["rounds"] == 2 and submitted["settings"]["debug"] == 1
        assert submitted["settings"]["models"] == {"coder": "fake-model"}

        # The jobs table follows the job without a reload (server-sent events).
        page.goto(f"{server.url}/jobs")
        _mark_no_reload(page)
        status = page.locator(f"tr[data-job='{job_id}'] [data-field=status]")
        seen = {status.text_content()}
        page.wait_for_function(f"document.querySelector(\"tr[data-job='{job_id}'] [data-field=status]\").textContent === 'finished'")
        seen.add("finished")
        assert _still_same_page(page), "the jobs page reloaded"
        assert seen & {"queued", "running"}, f"the table never showed the job before it finished: {seen}"
        job = wait_status(client, f"{API}/jobs/{job_id}", {}, {"finished"})
        row = page.locator(f"tr[data-job='{job_id}']")
        assert row.locator("[data-field=rounds_used]").text_content() == "2"
        assert row.locator("[data-field=tokens]").text_content() == f"{job['totals']['input_tokens'] + job['totals']['output_tokens']:,}"
        assert row.locator("[data-field=best_score]").text_content() == f"{job['best_score']:,.3f}"

        # The job page's plots hold the attempts' numbers, as the API gives them.
        page.goto(f"{server.url}/jobs/{job_id}")
        page.wait_for_function("window.cmCharts && window.cmCharts.speedup && window.cmCharts.score")
        charts = page.evaluate("""() => Object.fromEntries(Object.entries(window.cmCharts).map(([k, u]) =>
            [k, {data: u.data, labels: u.series.map(s => s.label)}]))""")
        attempts = job["attempts"]
        assert len(attempts) == 2
        assert charts["score"]["data"][1] == [a["score"] for a in attempts]
        sizes = sorted({m["params"]["N"] for a in attempts for m in a["measurements"]})
        assert charts["speedup"]["data"][0] == sizes
        for i, a in enumerate(attempts):
            assert charts["speedup"]["labels"][i + 1].startswith(f"attempt {i + 1} ")  # numbered within the job
            by_size = {m["params"]["N"]: m for m in a["measurements"]}
            assert charts["speedup"]["data"][i + 1] == pytest.approx([by_size[n]["speedup"] for n in sizes])
            assert charts["roofline"]["data"][i + 1] == pytest.approx([by_size[n]["candidate_roofline_pct"] for n in sizes])
        # Timeline, LLM calls, profile and the diff against the previous best are on the page.
        assert page.locator("#timeline tbody tr").count() >= 6
        assert page.locator("#llm-calls tbody tr").count() == 2
        assert page.text_content("#bottleneck") == "memory_bandwidth"
        assert "+// fake kernel, round 2" in page.text_content("#diff")
    # Nothing the pages loaded came from anywhere but this service.
    foreign = [u for u in page.requests if not u.startswith(server.url) and not u.startswith("data:")]
    assert foreign == []


def _wait_for(client: httpx.Client, url: str, check, timeout: float = 60) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = client.get(url).json()
        if check(job):
            return job
        time.sleep(0.1)
    raise AssertionError(f"never true for {url}: {job}")


ATTEMPT_ROWS = "#attempts tbody tr:not(:has(td.empty))"
CALL_ROWS = "#llm-calls tbody tr:not(:has(td.empty))"


def test_job_page_attempt_and_llm_call_rows_appear_live_with_fake_agent(db_url, server_factory, page, tmp_path):
    key = make_key(db_url, "jill", role="member")
    hold = tmp_path / "model-hold"
    hold.write_text("the FAKE model answers nothing while this file exists")
    server = server_factory(FAKE_MODEL_HOLD=str(hold), FAKE_AGENT_STEP_SECONDS="0.2", CUDAMASTER_HARNESS__REVIEW_SPEEDUP="2.5")
    with httpx.Client(base_url=server.url, headers={"X-API-Key": key}, timeout=30) as client:
        job_id = client.post(f"{API}/jobs", json={"task": "vector_add", "rounds": 2}).json()["id"]
        # Round 1's model call is recorded (sent) and held: no attempt yet when the page opens.
        _wait_for(client, f"{API}/jobs/{job_id}", lambda j: j["status"] == "running" and len(j["llm_calls"]) == 1)
        browser.sign_in(page, server.url, key)
        page.goto(f"{server.url}/jobs/{job_id}")
        _mark_no_reload(page)
        assert page.locator(ATTEMPT_ROWS).count() == 0
        assert page.text_content("#attempts tbody").strip() == "No attempts yet."
        assert page.locator(CALL_ROWS).count() == 1  # the held call, recorded as sent

        hold.unlink()  # the job goes on: 2 rounds, an LLM call and an attempt each
        page.wait_for_function(f"""document.getElementById('job-status').textContent === 'finished'
            && document.querySelectorAll("{ATTEMPT_ROWS}").length === 2 && document.querySelectorAll("{CALL_ROWS}").length === 2""")
        assert _still_same_page(page), "the job page reloaded"
        job = client.get(f"{API}/jobs/{job_id}").json()

    # The rows are the server's own, as a reload would show them (the review column included).
    attempts = page.locator(ATTEMPT_ROWS)
    assert [attempts.nth(i).get_attribute("data-attempt") for i in range(2)] == [str(a["id"]) for a in job["attempts"]]
    assert [attempts.nth(i).locator("td").first.text_content() for i in range(2)] == ["1", "2"]
    assert [attempts.nth(i).locator("td").nth(4).text_content() for i in range(2)] == [f"{a['score']:.3f}" for a in job["attempts"]]
    assert attempts.nth(1).locator(".status").text_content() == "flagged, pending"  # round 2's 3x is over 2.5x
    calls = page.locator(CALL_ROWS)
    shown = [[calls.nth(i).locator("td").nth(k).text_content() for k in (1, 2, 3, 4)] for i in range(2)]
    assert shown == [[c["role"], c["model"], f"{c['input_tokens']:,}", f"{c['output_tokens']:,}"] for c in job["llm_calls"]]
    assert page.text_content("#llm-count") == "2"


def test_jobs_page_shows_new_jobs_live_within_its_filters_and_its_keys_team_with_fake_agent(db_url, server_factory, page):
    kim = make_key(db_url, "kim", role="member", team="red")
    lee = make_key(db_url, "lee", role="member", team="blue")
    server = server_factory(FAKE_AGENT_STEP_SECONDS="0.05")
    with httpx.Client(base_url=server.url, timeout=30) as client:

        def submit(key: str, task: str) -> str:
            r = client.post(f"{API}/jobs", json={"task": task, "rounds": 1}, headers={"X-API-Key": key})
            assert r.status_code == 201, r.text
            return r.json()["id"]

        def finished(job_id: str, key: str) -> dict:
            return wait_status(client, f"{API}/jobs/{job_id}", {"X-API-Key": key}, {"finished"})

        old = submit(kim, "vector_add")
        finished(old, kim)
        browser.sign_in(page, server.url, kim)
        page.goto(f"{server.url}/jobs?task=vector_add")
        _mark_no_reload(page)
        table = page.locator("#jobs-table tbody tr[data-job]")
        assert [table.nth(i).get_attribute("data-job") for i in range(table.count())] == [old]

        # Another client submits: a job of another team, one outside the page's filter, then one inside it.
        blue = submit(lee, "vector_add")
        relu = submit(kim, "RELU")
        new = submit(kim, "vector_add")
        page.wait_for_selector(f"#jobs-table tr[data-job='{new}']")
        # Each poll of the live table reads every new job at once: the two others would be here by now.
        assert page.locator(f"#jobs-table tr[data-job='{blue}'], #jobs-table tr[data-job='{relu}']").count() == 0
        job = finished(new, kim)
        page.wait_for_function(f"document.querySelector(\"tr[data-job='{new}'] [data-field=status]\").textContent === 'finished'")
        finished(blue, lee)
        finished(relu, kim)
        # A job inside the filter, submitted after the two others finished: the stream's read that brings its row
        # also read theirs (each read takes every job created since the page's), so they would be here with it.
        probe = submit(kim, "vector_add")
        page.wait_for_selector(f"#jobs-table tr[data-job='{probe}']")
        assert page.locator(f"#jobs-table tr[data-job='{blue}'], #jobs-table tr[data-job='{relu}']").count() == 0
        assert [table.nth(i).get_attribute("data-job") for i in range(table.count())] == [probe, new, old]  # newest first
        row = page.locator(f"tr[data-job='{new}']")
        assert row.locator("td.task a").text_content() == "vector_add"
        assert row.locator("[data-field=tokens]").text_content() == f"{job['totals']['input_tokens'] + job['totals']['output_tokens']:,}"
        assert page.text_content("h1 [data-total]") == "3"
        assert _still_same_page(page), "the jobs page reloaded"

        # In another order the new job's place is not on this page: the page says it exists instead.
        page.goto(f"{server.url}/jobs?task=vector_add&sort=-cost")
        page.wait_for_function("document.getElementById('live-state').textContent === '● live'")
        _mark_no_reload(page)
        later = submit(kim, "vector_add")
        page.wait_for_selector("#new-jobs:not([hidden])")
        assert page.text_content("#new-jobs [data-new-count]") == "1"
        assert page.locator(f"#jobs-table tr[data-job='{later}']").count() == 0
        assert _still_same_page(page)


def test_manual_question_answer_cancel_and_resume_from_the_page_with_fake_agent(db_url, server_factory, page):
    key = make_key(db_url, "bob", role="member")
    server = server_factory()
    browser.sign_in(page, server.url, key)
    page.select_option("select[name=task]", "vector_add")
    page.fill("input[name=rounds]", "2")
    page.check("input[name=manual]")
    page.click("#submit-form button[type=submit]")
    page.wait_for_url(re.compile(r"/jobs/job_[0-9a-f]{16}$"))
    job_id = page.url.rsplit("/", 1)[1]

    _mark_no_reload(page)
    page.wait_for_selector("#question:not([hidden])")  # it appears on the open page when the job asks
    assert _still_same_page(page)
    assert "round 1: which strategy?" in page.text_content("#question-text")
    first_question = page.input_value("#question-id")
    assert first_question  # the form names the question it answers
    page.fill("#answer-form textarea[name=answer]", "tile it in shared memory")
    page.click("#answer-form button[type=submit]")
    page.wait_for_selector("#question:not([hidden])")
    page.wait_for_function("document.getElementById('question-text').textContent.includes('round 2')")

    with httpx.Client(base_url=server.url, headers={"X-API-Key": key}, timeout=30) as client:
        job = client.get(f"{API}/jobs/{job_id}").json()
        assert job["status"] == "waiting_for_input"
        assert [a["strategy"] for a in job["attempts"]] == ["tile it in shared memory"]

        page.click("#cancel-form button")
        page.wait_for_selector("#resume-form:not([hidden])")
        assert page.text_content("#job-status") == "cancelled"
        assert page.is_hidden("#cancel-form") and page.is_hidden("#question")
        assert client.get(f"{API}/jobs/{job_id}").json()["status"] == "cancelled"

        page.click("#resume-form button")
        page.wait_for_function("document.getElementById('job-status').textContent === 'waiting_for_input'")
        page.wait_for_selector("#question:not([hidden])")
        resumed = client.get(f"{API}/jobs/{job_id}").json()
        assert resumed["status"] == "waiting_for_input"
        # Round 2 still waits for its own answer: the answer to round 1 was not handed to it again.
        assert [a["strategy"] for a in resumed["attempts"]] == ["tile it in shared memory"]
        assert page.input_value("#question-id") == resumed["question"]["question"]["question_id"] != first_question

        # A page left open on round 1's question answers a question the job no longer asks: refused (409),
        # and the job keeps waiting on round 2 with nothing recorded.
        page.evaluate(f"document.getElementById('question-id').value = {first_question!r}")
        page.fill("#answer-form textarea[name=answer]", "a stale answer")
        page.click("#answer-form button[type=submit]")
        page.wait_for_load_state()
        assert f"waits on question {resumed['question']['question']['question_id']}" in page.text_content("body")
        after = client.get(f"{API}/jobs/{job_id}").json()
        assert after["status"] == "waiting_for_input"
        assert after["question"]["question"]["question_id"] == resumed["question"]["question"]["question_id"]
        assert [a["strategy"] for a in after["attempts"]] == ["tile it in shared memory"]


def test_wrong_key_and_viewer_key_get_the_right_pages_with_fake_agent(db_url, server_factory, page):
    member = make_key(db_url, "carol", role="member", team="red")
    viewer = make_key(db_url, "dave", role="viewer", team="red")
    stranger = make_key(db_url, "erin", role="member", team="blue")
    server = server_factory()
    with httpx.Client(base_url=server.url, timeout=30) as client:
        job_id = client.post(f"{API}/jobs", json={"task": "vector_add", "rounds": 1}, headers={"X-API-Key": member}).json()["id"]
        wait_status(client, f"{API}/jobs/{job_id}", {"X-API-Key": member}, {"finished"})

    # A page without a session sends you to sign in, and back afterwards.
    page.goto(f"{server.url}/jobs/{job_id}")
    assert "/login?next=" in page.url
    page.fill("input[name=key]", "cm_0123456789ab_not-a-real-secret")
    response = page.expect_response(lambda r: r.url.endswith("/login") and r.request.method == "POST")
    with response as info:
        page.click("form[action='/login'] button[type=submit]")
    assert info.value.status == 403
    assert "not recognised" in page.text_content("#login-error")
    assert not [c for c in page.context.cookies() if c["name"] == "cm_session"]
    page.goto(f"{server.url}/jobs")
    assert "/login" in page.url

    browser.sign_in(page, server.url, viewer)
    assert page.text_content("[data-role]") == "viewer"
    assert page.locator("#submit-form").count() == 0
    assert "cannot submit" in page.text_content("#read-only")
    page.goto(f"{server.url}/jobs/{job_id}")  # its team's job: readable, but no buttons
    assert page.text_content("#job-status") == "finished"
    assert page.locator("#cancel-form, #resume-form, #answer-form").count() == 0
    # Even a hand-made form post is refused with the API's own rule.
    csrf = page.get_attribute("form[action='/logout'] input[name=csrf]", "value")
    refused = page.request.post(f"{server.url}/jobs", multipart={"csrf": csrf, "task": "vector_add"})
    assert refused.status == 403 and "viewer" in refused.text()
    assert page.request.post(f"{server.url}/jobs/{job_id}/cancel", multipart={"csrf": csrf}).status == 403
    # A form without the session's CSRF token is refused too.
    assert page.request.post(f"{server.url}/jobs/{job_id}/cancel", multipart={"csrf": "forged"}).status == 403

    page.click("form[action='/logout'] button")
    page.wait_for_url(re.compile(r"/login$"))
    browser.sign_in(page, server.url, stranger)  # another team: the job does not exist for this key
    result = page.goto(f"{server.url}/jobs/{job_id}")
    assert result is not None and result.status == 404
    assert "no job" in page.text_content("#problem")


def test_session_cookie_is_httponly_samesite_and_ends_with_its_key_with_fake_agent(db_url, server_factory, page):
    key = make_key(db_url, "frank", role="admin")
    server = server_factory()
    browser.sign_in(page, server.url, key)
    (cookie,) = [c for c in page.context.cookies() if c["name"] == "cm_session"]
    assert cookie["httpOnly"] and cookie["sameSite"] == "Lax"
    assert key.split("_", 2)[2] not in cookie["value"]  # the secret part of the key never leaves the server
    assert page.evaluate("document.cookie").find("cm_session") < 0
    # The session reads the API like its key (GETs only) ...
    assert page.request.get(f"{server.url}{API}/jobs").status == 200
    assert page.request.post(f"{server.url}{API}/jobs", data={"task": "vector_add"}).status == 401
    # ... and ends when the key is revoked.
    with httpx.Client(base_url=server.url, headers={"X-API-Key": key}, timeout=30) as client:
        key_id = key.split("_")[1]
        other = client.post(f"{API}/keys", json={"name": "spare admin", "role": "admin"})
        assert other.status_code == 201, other.text
        r = client.post(f"{API}/keys/{key_id}/revoke")
        assert r.status_code == 200 and r.json()["revoked_at"] is not None, r.text
    page.goto(f"{server.url}/jobs")
    assert "/login" in page.url


def test_review_queue_accept_moves_the_leaderboard_and_charts_match_the_api_with_fake_agent(db_url, server_factory, page):
    owner = make_key(db_url, "gina", role="member")
    reviewer = make_key(db_url, "hank", role="reviewer")
    server = server_factory(CUDAMASTER_HARNESS__REVIEW_SPEEDUP="2.5", FAKE_AGENT_STEP_SECONDS="0.05")
    with httpx.Client(base_url=server.url, headers={"X-API-Key": owner}, timeout=30) as client:
        job_id = client.post(f"{API}/jobs", json={"task": "vector_add", "rounds": 2}).json()["id"]
        job = wait_status(client, f"{API}/jobs/{job_id}", {}, {"finished"})
        board = client.get(f"{API}/leaderboard").json()
        costs = client.get(f"{API}/costs").json()

    browser.sign_in(page, server.url, reviewer)
    page.goto(f"{server.url}/leaderboard")
    page.wait_for_function("window.cmCharts && window.cmCharts.shares")
    shares = page.evaluate("window.cmCharts.shares.data")
    assert shares[1] == [100 * board["shares"][0]["at_least"][t] for t in ("1", "2", "4", "8")]
    assert page.locator("#leaderboard tbody tr td").nth(3).text_content() == "2.000"  # the 3x attempt waits for review

    page.goto(f"{server.url}/costs")
    page.wait_for_function("window.cmCharts && window.cmCharts.costs")
    assert page.evaluate("window.cmCharts.costs.data[1]") == pytest.approx([d["cost_usd"] for d in costs["per_model_day"]])

    flagged = job["attempts"][1]["id"]
    page.goto(f"{server.url}/jobs/{job_id}")
    assert page.locator("#attempts tbody tr").nth(1).locator(".status").text_content() == "flagged, pending"
    page.goto(f"{server.url}/reviews")
    card = page.locator(f"article[data-attempt='{flagged}']")
    assert "over the review threshold 2.5x" in card.locator(".reasons").text_content()
    card.locator("input[name=note]").fill("checked the timings by hand")
    card.locator("button[value=accept]").click()
    page.wait_for_url(re.compile(r"/reviews$"))
    assert page.locator(f"article[data-attempt='{flagged}']").count() == 0  # no longer pending
    page.goto(f"{server.url}/reviews?status=accepted")
    assert "checked the timings by hand" in page.locator(f"article[data-attempt='{flagged}']").text_content()
    page.goto(f"{server.url}/leaderboard")
    assert page.locator("#leaderboard tbody tr td").nth(3).text_content() == "3.000"


def test_api_docs_pages_render_from_the_package_alone_with_fake_agent(server_factory, chromium):
    server = server_factory()
    context = chromium.new_context()  # the pages' own CSP applies here
    reached: list[str] = []  # requests that got an answer (a request the CSP blocks never leaves the browser)
    blocked: list[tuple[str, str]] = []
    context.on("response", lambda r: reached.append(r.url))
    context.on("requestfailed", lambda r: blocked.append((r.url, r.failure or "")))
    page = context.new_page()
    page.set_default_timeout(60_000)
    try:
        page.goto(f"{server.url}{API}/docs")
        page.wait_for_selector(".swagger-ui .info .title")
        assert "cudamaster" in page.text_content(".swagger-ui .info .title")
        assert page.locator(".opblock-summary-path[data-path='/api/v1/leaderboard']").count() == 1
        page.goto(f"{server.url}{API}/redoc")
        page.get_by_text("/api/v1/leaderboard", exact=True).first.wait_for()
    finally:
        context.close()
    assert [u for u in reached if not u.startswith((server.url, "data:", "blob:"))] == []
    # Redoc's sidebar logo is inline (the vendored bundle's CDN logo is patched out): nothing is even tried elsewhere.
    assert blocked == []


def test_custom_kernel_uploaded_from_the_form_with_fake_agent(db_url, server_factory, page, tmp_path):
    from .test_api_with_fake_agent import CUSTOM

    key = make_key(db_url, "ivy", role="member")
    server = server_factory()
    browser.sign_in(page, server.url, key)
    page.check("input[name=kind][value=custom]")
    assert page.is_hidden("select[name=task]") and page.is_visible("input[name=custom_name]")
    page.fill("input[name=custom_name]", CUSTOM["name"])
    page.fill("input[name=custom_prototype]", CUSTOM["prototype"])
    page.fill("textarea[name=custom_args]", "{not json")
    page.fill("input[name=custom_sizes]", '[{"N": 1024}, {"N": 1048576}]')
    page.click("#submit-form button[type=submit]")
    assert "custom kernel arguments: not JSON" in page.text_content("#form-errors")
    assert page.input_value("input[name=custom_name]") == CUSTOM["name"]  # what was typed is kept

    import json

    page.fill("textarea[name=custom_args]", json.dumps(CUSTOM["args"]))
    source = tmp_path / "scale.cu"
    source.write_text(CUSTOM["baseline_cu"])
    page.set_input_files("input[name=custom_file]", str(source))
    page.click("#submit-form button[type=submit]")
    page.wait_for_url(re.compile(r"/jobs/job_[0-9a-f]{16}$"))
    job_id = page.url.rsplit("/", 1)[1]
    with httpx.Client(base_url=server.url, headers={"X-API-Key": key}, timeout=30) as client:
        job = client.get(f"{API}/jobs/{job_id}").json()
    assert job["task"].startswith("ct_")
    assert job["settings"]["task"] == job["task"]


def test_pytorch_reference_submitted_from_the_form_makes_a_job_on_the_derived_task_with_fake_agent(db_url, server_factory, page, tmp_path):
    """A refused reference (no `Model`) shows the service's reason on the page and stores nothing; a good one uploaded
    as a file makes a job whose task is the derived one (stored: a job on it by id is accepted through the API)."""
    pytest.importorskip("torch")  # the optional extra: the reference runs in the sandbox at submit
    from .test_pytorch_submit import GOOD, _stored

    key = make_key(db_url, "ivy", role="member")
    server = server_factory()
    browser.sign_in(page, server.url, key)
    page.check("input[name=kind][value=pytorch]")
    assert page.is_hidden("select[name=task]") and page.is_hidden("input[name=custom_name]") and page.is_visible("input[name=pytorch_name]")
    page.fill("input[name=pytorch_name]", "relu")
    page.fill("textarea[name=pytorch_source]", GOOD.replace("class Model(", "class Other("))
    page.click("#submit-form button[type=submit]")
    errors = page.text_content("#form-errors")
    assert "pytorch reference refused (format)" in errors and "no `Model`" in errors, errors
    assert page.is_checked("input[name=kind][value=pytorch]") and page.input_value("input[name=pytorch_name]") == "relu"
    assert _stored(db_url) == (0, 0, 0)

    page.fill("textarea[name=pytorch_source]", "")
    page.fill("input[name=pytorch_sizes]", '[{"dim": 16}]')
    reference = tmp_path / "relu.py"
    reference.write_text(GOOD)
    page.set_input_files("input[name=pytorch_file]", str(reference))
    page.click("#submit-form button[type=submit]")
    page.wait_for_url(re.compile(r"/jobs/job_[0-9a-f]{16}$"))
    job_id = page.url.rsplit("/", 1)[1]
    with httpx.Client(base_url=server.url, headers={"X-API-Key": key}, timeout=30) as client:
        job = client.get(f"{API}/jobs/{job_id}").json()
        assert re.fullmatch(r"pt_[0-9a-f]{16}", job["task"]) and job["settings"]["task"] == job["task"], job
        r = client.post(f"{API}/jobs", json={"task": job["task"], "rounds": 1})
        assert r.status_code == 201, r.text
    assert _stored(db_url) == (2, 0, 1)
    from app.db.engine import make_engine, make_sessionmaker
    from app.db.models import StoredPyTorchTask

    engine = make_engine(db_url)
    try:
        with make_sessionmaker(engine)() as session:
            row = session.get(StoredPyTorchTask, job["task"])
            assert row is not None and row.reference_py == GOOD and row.name == "relu"
            assert [dict(pairs) for pairs in row.probe["sizes"]] == [{"batch_size": 4, "dim": 16}]  # the probe's, stored
    finally:
        engine.dispose()


CAMPAIGN_VARIANTS = ["vector_add/fp32", "RELU/bf16", "softmax/fp32"]


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def _cells(page, selector: str) -> list[list[str]]:
    return page.eval_on_selector_all(f"{selector} tbody tr", "rows => rows.map(r => Array.from(r.cells).map(c => c.textContent.trim()))")


def test_campaign_pages_progress_report_chart_and_cancel_with_fake_agent(db_url, server_factory, page, tmp_path):
    """A campaign over three variants, watched on its page until it ends (no reload); its progress, variant rows,
    success table and chart equal the API's numbers; the list shows it; a second campaign is cancelled from its page."""
    from app.web.fmt import usd as _usd

    key = make_key(db_url, "carla", role="member")
    hold = tmp_path / "model-hold"
    hold.write_text("the FAKE model answers nothing while this file exists")
    server = server_factory(FAKE_MODEL_HOLD=str(hold), FAKE_AGENT_STEP_SECONDS="0.05")
    with httpx.Client(base_url=server.url, headers={"X-API-Key": key}, timeout=30) as client:
        body = {"name": "three variants", "selection": {"variants": CAMPAIGN_VARIANTS}, "config": {"rounds": 1}, "max_in_flight": 1}
        first = client.post(f"{API}/campaigns", json=body).json()["id"]
        url = f"{API}/campaigns/{first}"
        _wait_for(client, url, lambda c: c["progress"]["running"] == 1)  # its first job waits on the held model

        browser.sign_in(page, server.url, key)
        assert page.locator("header nav a[href='/campaigns']").count() == 1
        page.goto(f"{server.url}/campaigns/{first}")
        _mark_no_reload(page)
        assert page.text_content("#campaign-status") == "running"
        assert page.text_content("#campaign-progress [data-field=ended]") == "0"
        assert page.text_content("#campaign-progress [data-field=total]") == "3"
        assert page.is_visible("#cancel-form") and page.is_hidden("#resume-form")
        hold.unlink()
        # The page follows the campaign until it ends, without a reload.
        page.wait_for_function("document.getElementById('campaign-status').textContent === 'finished'")
        assert _still_same_page(page), "the campaign page reloaded"
        detail = client.get(url).json()
        assert detail["status"] == "finished"
        p = detail["progress"]
        ended = p["finished"] + p["no_correct_kernel"] + p["cancelled"] + p["failed"]
        progress = "#campaign-progress "
        assert page.text_content(progress + "[data-field=ended]") == str(ended) == "3"
        assert page.text_content(progress + "[data-field=correct]") == str(p["correct"])
        assert page.text_content(progress + "[data-field=cost_usd]") == _usd(p["cost_usd"])
        assert page.is_hidden("#cancel-form") and page.is_visible("#resume-form")
        for v in detail["variants"]:
            row = page.locator(f"#variants tr[data-variant='{v['task']}/{v['precision']}']")
            assert row.locator("[data-field=status]").text_content() == v["status"]
            assert row.locator("[data-field=job] a").get_attribute("href") == f"/jobs/{v['job_id']}"
            assert row.locator("[data-field=best_score]").text_content() == ("–" if v["best_score"] is None else f"{v['best_score']:,.3f}")
        assert page.locator("#variants tbody tr").count() == 3

        # The report's success table and the chart hold the API report's numbers.
        report = client.get(f"{url}/report").json()["campaigns"][0]
        taus = report["taus"]
        success = report["success"]
        expected = [["overall", "3", *(_pct(success["overall"][str(t)]) for t in taus)]]
        for group in ("precision", "category"):
            for name, shares in success[group].items():
                n = sum(1 for line in report["lines"] if line[group] == name)
                expected.append([f"{group} {name}", str(n), *(_pct(shares[str(t)]) for t in taus)])
        table = "#report table[data-title^='Success at tau']"
        assert _cells(page, table) == expected
        page.wait_for_function("window.cmCharts && window.cmCharts.success")
        chart = page.evaluate("({data: window.cmCharts.success.data, labels: window.cmCharts.success.series.map(s => s.label)})")
        assert chart["data"][0] == list(range(len(taus)))
        assert chart["data"][1] == pytest.approx([100 * success["overall"][str(t)] for t in taus])
        for i, (name, shares) in enumerate(success["precision"].items()):
            assert chart["labels"][i + 2].startswith(f"precision {name} ")
            assert chart["data"][i + 2] == pytest.approx([100 * shares[str(t)] for t in taus])
        canvas = page.locator("#chart-success canvas")
        assert canvas.count() == 1 and canvas.is_visible()
        assert page.evaluate("document.querySelector('#chart-success canvas').width") > 0

        # A second campaign, cancelled from its page while its first job waits on the model.
        hold.write_text("held again")
        body = {"name": "to cancel", "selection": {"variants": CAMPAIGN_VARIANTS[:2]}, "config": {"rounds": 1}, "max_in_flight": 1}
        second = client.post(f"{API}/campaigns", json=body).json()["id"]
        _wait_for(client, f"{API}/campaigns/{second}", lambda c: c["progress"]["running"] == 1)

        page.goto(f"{server.url}/campaigns")
        rows = page.locator("#campaigns-table tbody tr[data-campaign]")
        assert [rows.nth(i).get_attribute("data-campaign") for i in range(rows.count())] == [second, first]  # newest first
        listed = page.locator(f"tr[data-campaign='{first}']")
        assert listed.locator("[data-field=status]").text_content() == "finished"
        assert listed.locator("[data-field=ended]").text_content() == "3" and listed.locator("[data-field=total]").text_content() == "3"
        assert listed.locator("[data-field=correct]").text_content() == str(p["correct"])
        assert listed.locator("[data-field=cost_usd]").text_content() == _usd(p["cost_usd"])
        assert "R=1 D=3" in listed.locator("[data-field=config]").text_content()
        assert page.locator(f"tr[data-campaign='{second}'] [data-field=status]").text_content() == "running"

        page.click(f"tr[data-campaign='{second}'] a[href='/campaigns/{second}']")
        page.wait_for_url(f"**/campaigns/{second}")
        page.click("#cancel-form button")
        page.wait_for_url(f"**/campaigns/{second}")
        page.wait_for_function("document.getElementById('campaign-status').textContent === 'cancelled'")
        assert client.get(f"{API}/campaigns/{second}").json()["status"] == "cancelled"
        assert page.is_visible("#resume-form") and page.is_hidden("#cancel-form")
        hold.unlink()
    foreign = [u for u in page.requests if not u.startswith(server.url) and not u.startswith("data:")]
    assert foreign == []
