"""The job spec is defined once (graph.contract): the dashboard's submit form, the command lines and the API
agree with it on defaults, ranges and choices (issue 32 item 3).

The form is the jobs page of the real app (in-process, signed in with a key), parsed; the CLI is typer's
click parameters of `cudamaster optimize` and `cudamaster campaign run`; the API is the OpenAPI document's
JobSubmit and the campaign's AgentConfig. Every expected value is read from the contract, and the contract's
literals are those of the layers below (the tasks' precisions and size sets, the profiler's modes)."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import Any, get_args

import pytest
import typer
from fastapi.testclient import TestClient

from app.db.models import ACTIVE_STATUSES, ALL_STATUSES, TERMINAL_STATUSES
from bench_tasks.spec import PRECISIONS, SIZE_SETS
from graph.contract import JOB_STATUSES, PROFILE_MODES, JobSpec, JobStatus, Status, knob
from profiling.filter import MODES

pytestmark = pytest.mark.timeout(120)

NUMBERS = ("rounds", "debug")
CHOICES = {"precision": PRECISIONS, "sizes": SIZE_SETS, "profile_mode": PROFILE_MODES, "sanitize": ("best", "every", "off")}


def test_the_contract_states_each_knob_once_with_the_layers_below():
    assert (knob("rounds").default, knob("rounds").min, knob("rounds").max) == (3, 1, 10)
    assert (knob("debug").default, knob("debug").min, knob("debug").max) == (3, 0, 10)
    assert knob("precision").choices == ("fp32", "bf16") and knob("sizes").choices == ("paper", "large", "edge", "all")
    assert knob("profile_mode").choices == MODES == ("filtered", "full", "none")
    spec = JobSpec(task="vector_add", precision="fp32")
    assert (spec.rounds, spec.debug, spec.sizes, spec.profile_mode, spec.sanitize) == (3, 3, "paper", "filtered", "best")
    assert knob("sanitize").choices == ("best", "every", "off")


def test_the_service_names_every_job_status_of_the_contract_and_the_graph_statuses_are_among_them():
    assert ALL_STATUSES == JOB_STATUSES == ACTIVE_STATUSES + TERMINAL_STATUSES
    assert set(get_args(JobStatus)) == set(ALL_STATUSES)
    assert set(get_args(Status)) - set(JOB_STATUSES) == {"stopped"}  # a stopped run is resumed: the job stays running


# -- the API ------------------------------------------------------------------------------------------
def _openapi_props(schema: dict[str, Any], model: str) -> dict[str, Any]:
    return schema["components"]["schemas"][model]["properties"]


def _enum(prop: dict[str, Any]) -> tuple[str, ...]:
    options = prop.get("anyOf", [prop])
    return tuple(v for o in options for v in o.get("enum", ()))


@pytest.fixture(scope="module")
def openapi() -> dict[str, Any]:
    from app.main import create_app

    return create_app(run_job=lambda *a, **k: None).openapi()


@pytest.mark.parametrize("model", ["JobSubmit", "AgentConfig"])
def test_the_api_bodies_take_defaults_ranges_and_choices_from_the_contract(openapi, model):
    props = _openapi_props(openapi, model)
    for name in NUMBERS:
        k = knob(name)
        assert (props[name]["default"], props[name]["minimum"], props[name]["maximum"]) == (k.default, k.min, k.max), name
        assert props[name]["description"] == k.help
    for name, choices in CHOICES.items():
        if name in props:  # a campaign's config has no precision (its selection has)
            assert _enum(props[name]) == choices and props[name]["default"] == knob(name).default, name
    assert "precision" in props or model == "AgentConfig"
    budget = props["profile_token_budget"]["anyOf"][0]
    assert (budget["minimum"], budget["maximum"]) == (knob("profile_token_budget").min, knob("profile_token_budget").max)


def test_the_campaign_selection_takes_the_contracts_precisions(openapi):
    assert _enum(_openapi_props(openapi, "Selection")["precision"]) == PRECISIONS


# -- the command lines ----------------------------------------------------------------------------------
def _params(command: str) -> dict[str, Any]:
    """The options of `cudamaster COMMAND` as typer builds them (its own click: min, max, default, help, type)."""
    from app.cli import cli

    found: Any = typer.main.get_command(cli)
    for part in command.split():
        found = found.get_command(None, part)
        assert found is not None, part
    return {p.name: p for p in found.params}


def _choices(param: Any) -> tuple[str, ...]:
    """The choices of an option typed by a Literal (or an optional one)."""
    annotation = param.type_descriptor.annotation
    literal = next((a for a in get_args(annotation) if get_args(a)), annotation)  # Optional[Literal[...]] -> Literal[...]
    return tuple(get_args(literal))


@pytest.mark.parametrize(("command", "names"), [("optimize", {"profile_mode": "profile"}), ("campaign run", {"profile_mode": "profile"})])
def test_the_command_lines_take_defaults_ranges_and_choices_from_the_contract(command, names):
    params = _params(command)
    for name in NUMBERS:
        k, p = knob(name), params[name]
        assert (p.default, p.min, p.max, p.help) == (k.default, k.min, k.max, k.help), name
    for name in ("sizes", "profile_mode", "sanitize"):
        p = params[names.get(name, name)]
        assert _choices(p) == knob(name).choices and p.default == knob(name).default, name
    assert _choices(params["precision"]) == PRECISIONS


# -- the dashboard's form -------------------------------------------------------------------------------
class _Form(HTMLParser):
    """The submit form's <input type=number> attributes and <select> options (the selected one marked)."""

    def __init__(self) -> None:
        super().__init__()
        self.inputs: dict[str, dict[str, str | None]] = {}
        self.selects: dict[str, list[tuple[str, bool]]] = {}
        self._in_form = False
        self._select: str | None = None
        self._option: bool | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "form" and a.get("id") == "submit-form":
            self._in_form = True
        if not self._in_form:
            return
        if tag == "input" and a.get("type") == "number" and a.get("name"):
            self.inputs[str(a["name"])] = a
        elif tag == "select" and a.get("name"):
            self._select = str(a["name"])
            self.selects[self._select] = []
        elif tag == "option" and self._select:
            self._option = "selected" in a

    def handle_data(self, data: str) -> None:
        if self._select and self._option is not None and data.strip():
            self.selects[self._select].append((data.strip(), self._option))
            self._option = None

    def handle_endtag(self, tag: str) -> None:
        if tag == "select":
            self._select = None
        elif tag == "form":
            self._in_form = False


@pytest.fixture(scope="module")
def jobs_page(tmp_path_factory) -> str:
    from app.main import create_app
    from settings import ServiceSettings
    from tests.service.conftest import make_key

    db_url = f"sqlite:///{tmp_path_factory.mktemp('one_spec') / 'service.db'}"
    key = make_key(db_url)
    app = create_app(ServiceSettings(database_url=db_url), run_job=lambda *a, **k: None)
    with TestClient(app) as client:
        login = client.get("/login")
        csrf = re.search(r'name="csrf" value="([^"]+)"', login.text)
        assert csrf, login.text[:300]
        assert client.post("/login", data={"key": key, "csrf": csrf.group(1)}, follow_redirects=False).status_code == 303
        page = client.get("/jobs")
        assert page.status_code == 200
        return page.text


def test_the_dashboard_form_takes_defaults_ranges_and_choices_from_the_contract(jobs_page):
    form = _Form()
    form.feed(jobs_page)
    for name in NUMBERS:
        k, field = knob(name), form.inputs[name]
        assert (field["value"], field["min"], field["max"]) == (str(k.default), str(k.min), str(k.max)), name
    for name in ("precision", "sizes", "sanitize"):
        options = form.selects[name]
        assert tuple(o for o, _ in options) == knob(name).choices, name
        assert [o for o, selected in options if selected] == [knob(name).default], name
