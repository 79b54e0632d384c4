"""The campaign report's summary of a settled campaign is kept by revision (app/campaigns/report.py): kept
while nothing it depends on changes, recomputed when a job is resumed, runs or settles again, and never kept
while a job runs (its attempts and events still arrive)."""

from __future__ import annotations

from app.campaigns import report
from app.db.engine import make_engine, make_sessionmaker
from app.db.models import Attempt, Campaign, CampaignVariant, Job

from .conftest import make_key


def _campaign(session) -> None:
    session.add(Campaign(id="cmp_rev", name="rev", selection={}, config={"rounds": 2, "profile_mode": "none"}, status="finished"))
    for i, (task, score) in enumerate((("vector_add", 2.0), ("relu", 3.0))):
        session.add(Job(id=f"job_rev{i}", task=task, precision="fp32", settings={}, status="finished", best_score=score))
        session.flush()
        session.add(CampaignVariant(campaign_id="cmp_rev", position=i, task=task, precision="fp32", job_id=f"job_rev{i}"))
    session.commit()


def _attempt(session, job_id: str, round_: int) -> None:
    session.add(Attempt(job_id=job_id, attempt_key=f"{job_id}-r{round_}", round=round_, verdict="ok", score=1.0, evaluation={}))
    session.commit()


def test_settled_summary_is_kept_until_a_job_changes_and_never_while_one_runs(db_url):
    make_key(db_url)  # migrates the database
    engine = make_engine(db_url)
    try:
        sessions = make_sessionmaker(engine)
        with sessions() as session:
            _campaign(session)
            first = report.summarize(session, "cmp_rev")
            assert [v.best_p for v in first.lines] == [2.0, 3.0]
            assert report.summarize(session, "cmp_rev") is first  # settled, unchanged: the kept summary

            job = session.get(Job, "job_rev0")
            job.status, job.best_score = "running", 5.0  # resumed
            session.commit()
            running = report.summarize(session, "cmp_rev")
            assert running is not first and [v.best_p for v in running.lines] == [5.0, 3.0]
            _attempt(session, "job_rev0", 3)  # a running job's attempt arrives: seen at once
            assert [v.rounds_used for v in report.summarize(session, "cmp_rev").lines] == [3, 0]

            job.status = "finished"
            session.commit()
            settled = report.summarize(session, "cmp_rev")
            assert [v.best_p for v in settled.lines] == [5.0, 3.0] and settled.lines[0].rounds_used == 3
            assert report.summarize(session, "cmp_rev") is settled
    finally:
        engine.dispose()
