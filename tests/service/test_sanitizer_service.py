"""compute-sanitizer verdicts in the service: stored with each attempt, in the API's attempt model, a badge per attempt on
the job page, the leaderboard's mark and filter (a kernel with findings never counts), the campaign report's counts."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient

from app.campaigns.report import NOT_SANITIZED, CampaignSummary, VariantLine
from graph.contract import AttemptEvent, SanitizerStatus, SanitizerVerdict

pytestmark = pytest.mark.timeout(120)
TOOLS = ("memcheck", "racecheck", "initcheck", "synccheck")


def _verdicts(status: str, found: str = "") -> list[SanitizerVerdict]:
    out = []
    for tool in TOOLS:
        if tool == found:
            report = ["Error: Race reported between Write access at k()+0x10 in kernel.cu:3"]
            out.append(SanitizerVerdict(tool=tool, status=SanitizerStatus.findings, kernel="k", errors=1, report=report))
        else:
            reason = "Error: Device not supported" if status == "not_run" else ""
            out.append(SanitizerVerdict(tool=tool, status=SanitizerStatus(status if status != "findings" else "clean"), reason=reason))
    return out


def _attempt(job: str, n: int, score: float, sanitizer: list[SanitizerVerdict]) -> AttemptEvent:
    return AttemptEvent(
        attempt_id=f"{job}:r{n}:d0", job_id=job, round=n, verdict="ok", score=score, source=f"// kernel {n}\n", sanitizer=sanitizer
    )


@pytest.fixture
def service(tmp_path):
    from app.auth import create_key
    from app.db.engine import make_engine, make_sessionmaker
    from app.db.migrate import upgrade
    from app.db.models import Attempt, Job
    from app.main import create_app
    from app.store.events import record_event
    from settings import ServiceSettings

    db_url = f"sqlite:///{tmp_path / 'service.db'}"
    upgrade(db_url)
    engine = make_engine(db_url)
    with make_sessionmaker(engine)() as session:
        row, key = create_key(session, "owner")
        for job, task in (("job_00000000000000a1", "vector_add"), ("job_00000000000000b2", "RELU")):
            session.add(Job(id=job, task=task, precision="fp32", settings={"task": task}, status="finished", api_key_id=row.id))
        session.commit()
        record_event(session, "job_00000000000000a1", _attempt("job_00000000000000a1", 1, 1.5, _verdicts("clean")))
        record_event(session, "job_00000000000000a1", _attempt("job_00000000000000a1", 2, 3.0, _verdicts("findings", found="racecheck")))
        record_event(session, "job_00000000000000b2", _attempt("job_00000000000000b2", 1, 2.0, _verdicts("not_run")))
        best = session.query(Attempt).filter_by(attempt_key="job_00000000000000a1:r1:d0").one()
        vadd = session.get(Job, "job_00000000000000a1")
        assert vadd is not None
        vadd.best_attempt_id, vadd.best_score = best.id, 1.5
        session.commit()
    engine.dispose()
    app = create_app(ServiceSettings(database_url=db_url), run_job=lambda *a, **k: None)
    with TestClient(app) as client:
        yield client, key


def test_attempts_carry_their_verdicts_in_the_api(service):
    client, key = service
    job = client.get("/api/v1/jobs/job_00000000000000a1", headers={"X-API-Key": key}).json()
    assert [a["sanitizer_status"] for a in job["attempts"]] == ["clean", "findings"]
    race = next(v for v in job["attempts"][1]["sanitizer"] if v["tool"] == "racecheck")
    assert race["status"] == "findings" and race["kernel"] == "k" and "Race reported" in race["report"][0]


def test_the_leaderboard_never_counts_findings_marks_each_entry_and_filters_to_clean(service):
    client, key = service
    board = client.get("/api/v1/leaderboard", headers={"X-API-Key": key}).json()
    best = {e["task"]: e for e in board["entries"]}
    assert best["vector_add"]["score"] == 1.5 and best["vector_add"]["sanitizer"] == "clean"  # the racy P 3.0 never counts
    assert best["RELU"]["sanitizer"] == "not_run"
    clean = client.get("/api/v1/leaderboard", params={"sanitizer_clean": "true"}, headers={"X-API-Key": key}).json()
    assert [e["task"] for e in clean["entries"]] == ["vector_add"]


def test_the_job_page_shows_a_badge_per_attempt_and_the_findings(service):
    client, key = service
    csrf = re.search(r'name="csrf" value="([^"]+)"', client.get("/login").text)
    assert csrf is not None
    assert client.post("/login", data={"key": key, "csrf": csrf.group(1)}, follow_redirects=False).status_code == 303
    page = client.get("/jobs/job_00000000000000a1").text
    assert re.findall(r'data-sanitizer="(\w+)"', page) == ["clean", "findings"]
    racy = re.search(r'data-attempt="(\d+)" data-number="2"', page)
    assert racy is not None
    detail = client.get(f"/jobs/job_00000000000000a1?attempt={racy.group(1)}").text
    assert 'id="sanitizer"' in detail and "Race reported between Write access" in detail
    board = client.get("/leaderboard", params={"sanitizer_clean": "true"}).text
    assert 'name="sanitizer_clean" value="true" checked' in board and "RELU" not in board.split('id="leaderboard"')[1]


def _line(task: str, best_p: float | None, sanitizer: str) -> VariantLine:
    return VariantLine(task, "fp32", "x", "j", "finished", best_p, 1, 0, 0, 0.0, [], "u", "u", 0, 0, sanitizer)


def test_the_campaign_report_counts_variants_by_their_best_kernels_verdict():
    lines = [_line("a", 2.0, "clean"), _line("b", 1.2, "not_run"), _line("c", 1.1, NOT_SANITIZED), _line("d", None, NOT_SANITIZED)]
    summary = CampaignSummary("c1", "n", "finished", {}, lines, {}, sanitizer_findings=3)
    assert summary.sanitizer == {"clean": 1, "not_run": 1, NOT_SANITIZED: 1, "kernels_with_findings": 3}
    assert summary.to_dict()["sanitizer"] == summary.sanitizer
