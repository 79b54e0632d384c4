"""The dashboard, round two (issue 43), read from the REAL app in-process (FastAPI's TestClient, signed in with a
key through the sign-in form, SQLite): what a page says and links, without a browser. The layout items (the jobs
list at 1280 and 390 px, the charts' ticks, the empty job page) are test_dashboard_round_two_browser.py's.

FAKE: jobs run no agent (an injected job function that does nothing), so pages show stored rows only."""

from __future__ import annotations

import gzip
import re
import time
from html.parser import HTMLParser
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.campaigns.schemas import AgentConfig, CampaignSubmit, Selection
from app.main import create_app
from app.web.campaign_form import spec_field
from graph.contract import Outcome
from settings import ServiceSettings

from .conftest import make_key
from .test_without_gpu import NO_DEVICE, fake_nvidia_smi

pytestmark = pytest.mark.timeout(120)


def _held_job(run: Any) -> Outcome:
    """FAKE: no agent; the job stays running until it is told to stop (a minute at most)."""
    deadline = time.monotonic() + 60
    while not run.should_stop() and time.monotonic() < deadline:
        time.sleep(0.05)
    return Outcome(job_id=run.job_id, status="stopped", message="FAKE: held until stopped")


def _signed_in(client: TestClient, key: str) -> TestClient:
    login = client.get("/login")
    csrf = re.search(r'name="csrf" value="([^"]+)"', login.text)
    assert csrf, login.text[:300]
    assert client.post("/login", data={"key": key, "csrf": csrf.group(1)}, follow_redirects=False).status_code == 303
    return client


def _csrf(page: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', page)
    assert found
    return found.group(1)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """An app with a FAKE job function (it can run jobs), a member and a viewer key."""
    db_url = f"sqlite:///{tmp_path_factory.mktemp('round_two') / 'service.db'}"
    keys = {"member": make_key(db_url, "alice", role="member"), "viewer": make_key(db_url, "vic", role="viewer")}
    apps = [create_app(ServiceSettings(database_url=db_url), run_job=_held_job) for _ in range(2)]  # two replicas, one database
    with TestClient(apps[0]) as member, TestClient(apps[1]) as viewer:
        yield {"member": _signed_in(member, keys["member"]), "viewer": _signed_in(viewer, keys["viewer"]), "keys": keys, "db_url": db_url}


class _Fields(HTMLParser):
    """A form's inputs (name -> attributes) and selects (name -> [(value, selected)])."""

    def __init__(self, form_id: str) -> None:
        super().__init__()
        self.form_id, self.inside, self.select = form_id, False, ""
        self.inputs: dict[str, dict[str, str | None]] = {}
        self.selects: dict[str, list[tuple[str, bool]]] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "form":
            self.inside = a.get("id") == self.form_id
        if not self.inside:
            return
        if tag == "input" and a.get("name"):
            self.inputs[str(a["name"])] = a
        elif tag == "select":
            self.select = str(a.get("name"))
            self.selects[self.select] = []
        elif tag == "option" and self.select:
            self.selects[self.select].append((a.get("value"), "selected" in a))  # type: ignore[arg-type]

    def handle_data(self, data: str) -> None:
        options = self.selects.get(self.select)
        if options and options[-1][0] is None and data.strip():  # <option>paper</option>: its text is its value
            options[-1] = (data.strip(), options[-1][1])

    def handle_endtag(self, tag: str) -> None:
        if tag == "select":
            self.select = ""
        elif tag == "form":
            self.inside = False


def _form(page: str, form_id: str) -> _Fields:
    fields = _Fields(form_id)
    fields.feed(page)
    return fields


# -- item 13: campaigns started, paused and resumed from the dashboard -------------------------------------------
def test_the_campaign_form_takes_defaults_bounds_and_choices_from_the_campaign_spec(site):
    page = site["member"].get("/campaigns/new")
    assert page.status_code == 200
    form = _form(page.text, "campaign-form")
    for model, name in ((AgentConfig, "rounds"), (AgentConfig, "debug"), (CampaignSubmit, "max_in_flight")):
        spec, field = spec_field(model, name), form.inputs[name]
        assert (field["value"], field["min"], field["max"]) == (str(spec.default), str(spec.min), str(spec.max)), name
    for model, name in ((AgentConfig, "sizes"), (AgentConfig, "profile_mode"), (Selection, "precision")):
        spec, options = spec_field(model, name), form.selects[name]
        assert tuple(v for v, _ in options if v) == spec.choices, name
        assert [v for v, chosen in options if chosen] == ([spec.default] if spec.default else []), name
    budget = spec_field(AgentConfig, "profile_token_budget")
    assert (form.inputs["profile_token_budget"]["min"], form.inputs["profile_token_budget"]["max"]) == (str(budget.min), str(budget.max))
    assert budget.help and budget.help in page.text  # the help is the spec's description


def test_a_member_starts_pauses_and_resumes_a_campaign_from_the_dashboard(site):
    member = site["member"]
    csrf = _csrf(member.get("/campaigns/new").text)
    body = {"csrf": csrf, "name": "two variants", "pick": "list", "variants": "vector_add/fp32\nRELU/bf16", "rounds": "2", "debug": "1"}
    started = member.post("/campaigns/new", data=body, follow_redirects=False)
    assert started.status_code == 303, started.text[:500]
    path = started.headers["location"]
    campaign_id = path.rsplit("/", 1)[1]
    api = member.get(f"/api/v1/campaigns/{campaign_id}", headers={"X-API-Key": site["keys"]["member"]}).json()
    assert api["name"] == "two variants" and api["config"]["rounds"] == 2 and api["config"]["debug"] == 1
    assert [f"{v['task']}/{v['precision']}" for v in api["variants"]] == ["vector_add/fp32", "RELU/bf16"]
    page = member.get(path).text
    assert "Pause" in page
    assert member.post(f"{path}/cancel", data={"csrf": csrf}, follow_redirects=False).status_code == 303
    assert member.get(f"/api/v1/campaigns/{campaign_id}", headers={"X-API-Key": site["keys"]["member"]}).json()["status"] == "cancelled"
    deadline = time.monotonic() + 60  # resume waits until the cancelled jobs have stopped (409 until then)
    while (resumed := member.post(f"{path}/resume", data={"csrf": csrf}, follow_redirects=False)).status_code == 409:
        assert time.monotonic() < deadline, resumed.text[-1500:]
        time.sleep(0.2)
    assert resumed.status_code == 303
    assert member.get(f"/api/v1/campaigns/{campaign_id}", headers={"X-API-Key": site["keys"]["member"]}).json()["status"] == "running"


def test_the_campaign_form_refuses_what_the_api_refuses_and_keeps_what_was_typed(site):
    member = site["member"]
    csrf = _csrf(member.get("/campaigns/new").text)
    bad = member.post("/campaigns/new", data={"csrf": csrf, "name": "too many rounds", "rounds": "99"})
    assert bad.status_code == 422 and "config.rounds" in bad.text and "less than or equal to 10" in bad.text
    assert 'value="too many rounds"' in bad.text and _form(bad.text, "campaign-form").inputs["rounds"]["value"] == "99"
    unknown = member.post("/campaigns/new", data={"csrf": csrf, "pick": "list", "variants": "no_such_task/fp32"})
    assert unknown.status_code == 422 and "no_such_task" in unknown.text


def test_a_viewer_gets_the_apis_refusal_not_a_form(site):
    viewer = site["viewer"]
    page = viewer.get("/campaigns/new")
    assert page.status_code == 200 and 'id="campaign-form"' not in page.text and "cannot start one" in page.text
    sent = viewer.post("/campaigns/new", data={"csrf": _csrf(viewer.get("/jobs").text), "name": "x"})
    assert sent.status_code == 403 and "cannot submit or act on any" in sent.text


# -- items 5, 11, 12 -----------------------------------------------------------------------------------------------
def test_the_404_page_links_the_dashboard_and_the_api_docs(site):
    page = site["member"].get("/no/such/page", headers={"Accept": "text/html"})
    assert page.status_code == 404
    links = re.findall(r'<ul class="elsewhere" id="elsewhere">(.*?)</ul>', page.text, re.S)[0]
    hrefs = re.findall(r'href="([^"]+)"', links)
    assert {"/jobs", "/campaigns", "/costs", "/api/v1/docs", "/api/v1/redoc"} <= set(hrefs)


@pytest.mark.parametrize("guess", ["/docs", "/redoc"])
def test_a_fastapi_users_first_guesses_lead_to_the_api_docs(site, guess):
    answer = site["member"].get(guess, follow_redirects=False)
    assert answer.status_code == 307 and answer.headers["location"] == f"/api/v1{guess}"


def test_the_api_docs_send_a_csp_and_no_inline_script(site):
    for path in ("/api/v1/docs", "/api/v1/redoc"):
        page = site["member"].get(path)
        assert "script-src 'self'" in page.headers["content-security-policy"], path
        assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>\s*\S", page.text), path  # every script is a file


def test_openapi_json_is_gzipped_for_a_client_that_accepts_it(site):
    packed = site["member"].get("/api/v1/openapi.json", headers={"Accept-Encoding": "gzip"})
    assert packed.headers["content-encoding"] == "gzip" and packed.json()["openapi"]
    raw = site["member"].get("/api/v1/openapi.json", headers={"Accept-Encoding": "identity"})
    assert "content-encoding" not in raw.headers and raw.json() == packed.json()
    assert len(gzip.compress(raw.content)) < len(raw.content) / 4


def test_costs_with_a_bad_days_value_shows_the_default_window(site):
    page = site["member"].get("/costs?days=abc")
    assert page.status_code == 200 and "last 30 days" in page.text and "days=&#39;abc&#39;" in page.text
    assert "last 7 days" in site["member"].get("/costs?days=7").text
    for odd in ("²", "9" * 5000):  # a digit int() does not read; past int()'s 4300 digits: both were a 500
        page = site["member"].get("/costs", params={"days": odd})
        assert page.status_code == 200 and "last 30 days" in page.text, page.status_code


def test_the_submit_forms_task_is_vector_add_until_one_is_chosen(site):
    options = _form(site["member"].get("/jobs").text, "submit-form").selects["task"]
    assert [v for v, chosen in options if chosen] == ["vector_add"] and options[0][0] != "vector_add"


# -- item 2: no submit form on a service that cannot run jobs ----------------------------------------------------
def test_a_service_without_a_gpu_shows_why_instead_of_the_submit_form(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", fake_nvidia_smi(tmp_path, NO_DEVICE))  # FAKE nvidia-smi: no device on any machine
    db_url = f"sqlite:///{tmp_path / 'nogpu.db'}"
    key = make_key(db_url, "alice", role="member")
    with TestClient(create_app(ServiceSettings(database_url=db_url))) as client:
        assert client.get("/api/v1/health").json()["can_run_jobs"] is False
        jobs = _signed_in(client, key).get("/jobs").text
        assert 'id="submit-form"' not in jobs and 'id="cannot-run"' in jobs and "No devices were found" in jobs
        form = client.get("/campaigns/new").text
        assert 'id="campaign-form"' not in form and 'id="cannot-run"' in form


# -- item 8: an unknown task gets the CLI's answer from the API too ----------------------------------------------
def test_an_unknown_task_gets_did_you_mean_from_the_api_as_from_the_cli(site):
    from typer.testing import CliRunner

    from app.cli import cli

    answer = site["member"].post("/api/v1/jobs", json={"task": "relu"}, headers={"X-API-Key": site["keys"]["member"]})
    assert answer.status_code == 422
    (error,) = answer.json()["detail"]
    assert "did you mean RELU?" in error["msg"] and "vector_add" not in error["msg"] and "ctx" not in error
    campaign = site["member"].post(
        "/api/v1/campaigns", json={"selection": {"variants": ["relu/fp32"]}}, headers={"X-API-Key": site["keys"]["member"]}
    )
    assert campaign.status_code == 422 and "did you mean RELU?" in campaign.json()["detail"][0]["msg"]
    out = CliRunner().invoke(cli, ["bench", "eval", "relu", "--candidate", "x.cu", "--compile-only"])
    assert "unknown task 'relu': did you mean RELU?" in out.output


# -- item 4: the costs page names a custom kernel as the jobs list does --------------------------------------------
def test_costs_name_a_custom_kernel_not_its_id(site):
    """A stored custom task (FAKE: written to the database as the API stores one after its baseline check, which
    needs nvcc) with one paid LLM call: the costs page's per-job row says its name."""
    from app.db.engine import make_engine, make_sessionmaker
    from app.db.models import CustomTask, Job, LlmCall

    key_id = site["keys"]["member"].split("_")[1]
    engine = make_engine(site["db_url"])
    try:
        with make_sessionmaker(engine)() as session:
            session.add(
                CustomTask(id="ct_00c0ffee00c0ffee", api_key_id=key_id, name="scale_me", precision="fp32", spec={}, baseline_source="")
            )
            session.add(
                Job(
                    id="job_00c0ffee00c0ffee",
                    task="ct_00c0ffee00c0ffee",
                    precision="fp32",
                    settings={},
                    status="finished",
                    api_key_id=key_id,
                    llm_calls_count=1,
                    input_tokens=10,
                    cost_usd=0.01,
                )
            )
            session.add(
                LlmCall(job_id="job_00c0ffee00c0ffee", call_key="c1", role="coder", model="fake-model", input_tokens=10, cost_usd=0.01)
            )
            session.commit()
    finally:
        engine.dispose()
    page = site["member"].get("/costs").text
    row = re.search(r'<tr><td><a href="/jobs/job_00c0ffee00c0ffee">.*?</tr>', page, re.S)
    assert row, page[-2000:]
    cells = re.findall(r"<td[^>]*>(.*?)</td>", row.group(0), re.S)
    assert cells[1].startswith("scale_me ") and "ct_" not in re.sub(r"<[^>]+>", "", cells[1])


@pytest.mark.parametrize(
    ("address", "back", "named"),
    [
        ("/jobs?status=bogus", "/jobs", "filter status='bogus'"),
        ("/jobs?offset=-1", "/jobs", "offset -1"),
        ("/leaderboard?precision=fp64", "/leaderboard", "filter precision='fp64'"),
        ("/costs?model=no%20spaces", "/costs", "filter model='no spaces'"),
        ("/reviews?status=maybe", "/reviews", "filter status='maybe'"),
        ("/campaigns?status=bogus", "/campaigns", "filter status='bogus'"),
    ],
)
def test_a_bad_filter_shows_the_error_page_with_a_link_back_to_its_page(site, address, back, named):
    page = site["member"].get(address, headers={"Accept": "text/html"})
    assert page.status_code == 422 and named in page.text.replace("&#39;", "'"), page.text[-800:]
    assert f'<a href="{back}">Back</a>' in page.text and 'id="elsewhere"' not in page.text


def test_the_submit_and_campaign_forms_read_the_models_per_role_one_way():
    from app.web.jobs_pages import role_models

    form = {"model_all": " gpt-x ", "model_planner": "", "model_coder": "  ", "model_debugger": "fixer", "name": "ignored"}
    assert role_models(form) == {"*": "gpt-x", "debugger": "fixer"}
    assert role_models({}) == {}


# -- attack: the submit form's JSON fields -------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("field", "text", "named"),
    [
        ("pytorch_sizes", "[" * 5000, "nested too deeply"),  # json.loads: RecursionError, not a JSONDecodeError
        ("pytorch_sizes", '[{"dim": ' + "9" * 5000 + "}]", "too long"),  # int(): ValueError past 4300 digits
        ("custom_args", "[" * 5000, "nested too deeply"),
    ],
)
def test_the_submit_forms_json_fields_refuse_deep_nesting_and_huge_numbers_with_a_422(site, field, text, named):
    member = site["member"]
    kind = field.split("_")[0]
    form = {"csrf": _csrf(member.get("/jobs").text), "kind": kind, f"{kind}_name": "x", f"{kind}_source": "x = 1", field: text}
    r = member.post("/jobs", data=form)
    assert r.status_code == 422 and named in r.text, (r.status_code, r.text[-600:])


def test_the_submit_forms_sanitizer_choice_reaches_the_job(site):
    # The form's Sanitizer select was read from the handler's parameters, which had none for it: every job got `best`.
    member = site["member"]
    form = {"csrf": _csrf(member.get("/jobs").text), "kind": "task", "task": "vector_add", "sanitize": "off"}
    r = member.post("/jobs", data=form)
    assert r.status_code == 200 and "/jobs/job_" in str(r.url), (r.status_code, str(r.url), r.text[-400:])
    job_id = str(r.url).rstrip("/").split("/")[-1]
    job = member.get(f"/api/v1/jobs/{job_id}", headers={"X-API-Key": site["keys"]["member"]}).json()
    assert job["settings"]["sanitize"] == "off", job["settings"]
