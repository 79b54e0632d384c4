"""What the review queue reads (issue 31 item 17, the /reviews page's time): a page of reviews loads its evidence
in a fixed number of queries, whatever its size, without the attempts' sources and evaluations (tens of KB of
JSON each); the flagged share is counted over the visible jobs' correct attempts and follows new attempts and
reviews at once."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import event, insert, inspect, true

from app.db.engine import make_engine, make_sessionmaker
from app.db.migrate import upgrade
from app.db.models import Attempt, Job, Measurement, Profile, Review
from app.services.reviews import flagged_share, list_reviews

START = datetime(2026, 12, 1, tzinfo=UTC)


def _job(i: int, team: str) -> dict:
    at = START + timedelta(minutes=i)
    return {
        "id": f"job_{i:04d}",
        "task": "vector_add",
        "precision": "fp32",
        "settings": {},
        "status": "finished",
        "team": team,
        "created_at": at,
    }


def _attempt(aid: int, job_id: str, verdict: str) -> dict:
    return {
        "id": aid,
        "job_id": job_id,
        "attempt_key": f"a{aid}",
        "source": "// kernel\n" * 500,
        "verdict": verdict,
        "score": 2.0 if verdict == "ok" else None,
        "evaluation": {"rows": [{"params": {"N": 1024}, "checks": [{"stage": "first"}] * 200}]},
        "created_at": START,
    }


@pytest.fixture
def sessions(db_url):
    upgrade(db_url)
    engine = make_engine(db_url)
    rows = {"jobs": [], "attempts": [], "measurements": [], "profiles": [], "reviews": []}
    aid = 0
    for i in range(30):
        job_id, team = f"job_{i:04d}", ("red", "blue")[i % 2]
        rows["jobs"].append(_job(i, team))
        for verdict in ("ok", "ok", "wrong_answer"):
            aid += 1
            rows["attempts"].append(_attempt(aid, job_id, verdict))
            rows["measurements"] += [{"attempt_id": aid, "size_index": s, "params": {"N": 1024 << s}, "passed": True} for s in (0, 1)]
            rows["profiles"].append(
                {"attempt_id": aid, "bottleneck_class": "compute", "metrics": {"m": 1.0}, "text": "p", "created_at": START}
            )
            if verdict == "ok" and aid % 3 == 1:
                rows["reviews"].append(
                    {
                        "attempt_id": aid,
                        "job_id": job_id,
                        "status": "pending",
                        "reasons": ["r"],
                        "flagged_at": START + timedelta(seconds=aid),
                    }
                )
    with engine.begin() as conn:
        for model, key in ((Job, "jobs"), (Attempt, "attempts"), (Measurement, "measurements"), (Profile, "profiles"), (Review, "reviews")):
            conn.execute(insert(model), rows[key])
    yield engine, make_sessionmaker(engine)
    engine.dispose()


def test_a_page_of_reviews_loads_its_evidence_in_fixed_queries_without_sources_or_evaluations(sessions):
    engine, make_session = sessions
    statements: list[str] = []
    event.listen(engine, "before_cursor_execute", lambda conn, cursor, statement, *rest: statements.append(statement))
    counts = {}
    for limit in (3, 20):
        statements.clear()
        with make_session() as session:
            page, total = list_reviews(session, true(), status="pending", limit=limit, offset=0)
            assert len(page) == min(limit, total) and total == 30
            for review in page:
                assert {"source", "evaluation", "compile_log"} <= inspect(review.attempt).unloaded
                assert review.attempt.score == 2.0 and len(review.attempt.measurements) == 2
                assert review.attempt.profile is not None and review.job.task == "vector_add"
            counts[limit] = len(statements)
    assert counts[3] == counts[20], counts  # no query per review
    assert not [s for s in statements if "attempts.source" in s or "attempts.evaluation" in s]


def test_the_flagged_share_counts_the_visible_correct_attempts_and_follows_new_rows(sessions):
    engine, make_session = sessions
    with make_session() as session:
        assert flagged_share(session, true()) == (30, 60)
        assert flagged_share(session, Job.team == "red") == (15, 30)
        assert flagged_share(session, true()) == (30, 60)  # the kept count, while nothing was added
    with engine.begin() as conn:
        conn.execute(insert(Attempt), [_attempt(1000, "job_0000", "ok")])
    with make_session() as session:
        assert flagged_share(session, true()) == (30, 61)
        assert flagged_share(session, Job.team == "blue") == (15, 30)
    with engine.begin() as conn:
        conn.execute(
            insert(Review), [{"attempt_id": 1000, "job_id": "job_0000", "status": "pending", "reasons": ["r"], "flagged_at": START}]
        )
    with make_session() as session:
        assert flagged_share(session, true()) == (31, 61)
        assert flagged_share(session, Job.team == "red") == (16, 31)
