"""Service latency figures (not a test).

1. With 1,000 finished jobs stored (3 attempts x 5 sizes and 6 LLM calls each): p50/p95 of
   GET /api/v1/jobs (a page of 50) and GET /api/v1/jobs/{id} (detail). Target p95 < 50 ms.
2. With 50 jobs in flight on the test double (tests/service/fake_agent.py: a FAKE agent, no LLM,
   no GPU): p50/p95 of GET /api/v1/health. Target p95 < 20 ms.

    python scripts/bench_service.py [--database-url URL] [--out docs/results/service_latency.json]

The server is a real uvicorn process on 127.0.0.1; requests are sequential from one client.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import random
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from app.auth import create_key  # noqa: E402
from app.db.engine import make_engine, make_sessionmaker  # noqa: E402
from app.db.migrate import upgrade  # noqa: E402
from app.db.models import Attempt, Job, LlmCall, Measurement  # noqa: E402
from app.db.types import utcnow  # noqa: E402
from tests.service.conftest import Server  # noqa: E402
from tests.service.fake_agent import fake_evaluation  # noqa: E402

API = "/api/v1"


def seed(db_url: str, n_jobs: int, key_id: str) -> list[str]:
    engine = make_engine(db_url)
    sessions = make_sessionmaker(engine)
    ids = []
    with sessions() as session:
        for j in range(n_jobs):
            job_id = f"job_bench{j:06d}"
            ids.append(job_id)
            now = utcnow()
            job = Job(
                id=job_id,
                task="vector_add",
                precision="fp32",
                settings={"task": "vector_add", "rounds": 3},
                status="finished",
                message="done",
                api_key_id=key_id,
                created_at=now,
                updated_at=now,
                started_at=now,
                finished_at=now,
                attempts_count=3,
                llm_calls_count=6,
                input_tokens=6000,
                output_tokens=600,
                reasoning_tokens=0,
                cached_tokens=0,
                cost_usd=0.06,
                llm_latency_s=3.0,
                cancel_requested=False,
            )
            session.add(job)
            for r in (1, 2, 3):
                ev = fake_evaluation("vector_add", "fp32", r)
                ev["rows"] = ev["rows"] + ev["rows"] + ev["rows"][:1]  # 5 sizes
                a = Attempt(
                    job_id=job_id,
                    attempt_key=f"{job_id}:r{r}:d0",
                    round=r,
                    debug_step=0,
                    role="coder",
                    strategy="s",
                    source="// kernel\n" * 40,
                    source_sha256="0" * 64,
                    flags=[],
                    compile_log="",
                    verdict="ok",
                    message="",
                    score=1.0 + r,
                    evaluation=ev,
                    created_at=now,
                )
                a.measurements = [
                    Measurement(
                        size_index=i,
                        params=row["params"],
                        passed=True,
                        baseline_median_us=10.0,
                        baseline_iqr_us=0.1,
                        candidate_median_us=5.0,
                        candidate_iqr_us=0.1,
                        speedup=2.0,
                        speedup_iqr=0.01,
                        roofline_floor_us=1.0,
                        candidate_roofline_pct=20.0,
                    )
                    for i, row in enumerate(ev["rows"])
                ]
                session.add(a)
                for c in range(2):
                    session.add(
                        LlmCall(
                            job_id=job_id,
                            call_key=f"{job_id}:llm{2 * r + c}",
                            round=r,
                            role="coder",
                            model="m",
                            input_tokens=1000,
                            output_tokens=100,
                            latency_s=0.5,
                            cost_usd=0.01,
                            created_at=now,
                        )
                    )
            if j % 100 == 99:
                session.commit()
        session.commit()
    engine.dispose()
    return ids


def timed(client: httpx.Client, n: int, url_of, headers) -> dict[str, float]:
    times = []
    for i in range(n):
        t = time.perf_counter()
        r = client.get(url_of(i), headers=headers)
        times.append((time.perf_counter() - t) * 1000)
        r.raise_for_status()
    times.sort()
    return {
        "n": n,
        "p50_ms": round(statistics.median(times), 2),
        "p95_ms": round(times[int(0.95 * n) - 1], 2),
        "max_ms": round(times[-1], 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database-url", help="default: a fresh SQLite file in a temporary directory")
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--in-flight", type=int, default=50)
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--out", default=str(REPO / "docs/results/service_latency.json"))
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="cm-bench-service-"))
    db_url = args.database_url or f"sqlite:///{tmp / 'service.db'}"
    upgrade(db_url)
    engine = make_engine(db_url)
    with make_sessionmaker(engine)() as session:
        row, key = create_key(session, "bench")
    engine.dispose()
    t0 = time.monotonic()
    ids = seed(db_url, args.jobs, row.id)
    seed_s = time.monotonic() - t0
    headers = {"X-API-Key": key}

    server = Server(
        db_url,
        tmp,
        CUDAMASTER_SERVICE__MAX_RUNNING_JOBS=str(args.in_flight),
        CUDAMASTER_SERVICE__MAX_JOBS_IN_FLIGHT_PER_KEY="1000",
        CUDAMASTER_SERVICE__POLL_SECONDS="1",
        CUDAMASTER_SERVICE__LEASE_SECONDS="60",
        FAKE_AGENT_STEP_SECONDS="2",
    ).start()
    results: dict = {}
    try:
        with httpx.Client(base_url=server.url, timeout=30) as client:
            for _ in range(20):  # warm-up
                client.get(f"{API}/jobs", headers=headers)
                client.get(f"{API}/jobs/{ids[0]}", headers=headers)
            rng = random.Random(1)
            results["list_page_50"] = timed(
                client, args.requests, lambda i: f"{API}/jobs?limit=50&offset={rng.randrange(0, args.jobs - 50)}", headers
            )
            results["list_filtered"] = timed(
                client, args.requests, lambda i: f"{API}/jobs?status=finished&task=vector_add&limit=50", headers
            )
            results["detail"] = timed(client, args.requests, lambda i: f"{API}/jobs/{rng.choice(ids)}", headers)
            results["health_idle"] = timed(client, args.requests, lambda i: f"{API}/health", {})
            for _ in range(args.in_flight):
                r = client.post(f"{API}/jobs", json={"task": "vector_add", "rounds": 10}, headers=headers)
                r.raise_for_status()
            deadline = time.monotonic() + 60
            while client.get(f"{API}/health").json()["running_jobs"] < args.in_flight:
                if time.monotonic() > deadline:
                    raise SystemExit("the jobs did not all start within 60 s")
                time.sleep(0.2)
            results["health_with_jobs_in_flight"] = timed(client, args.requests, lambda i: f"{API}/health", {})
            results["health_with_jobs_in_flight"]["jobs_in_flight"] = client.get(f"{API}/health").json()["running_jobs"]
            results["detail_with_jobs_in_flight"] = timed(client, args.requests // 3, lambda i: f"{API}/jobs/{rng.choice(ids)}", headers)
    finally:
        server.stop()

    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip()
    doc = {
        "command": "python " + " ".join(shlex.quote(a) for a in sys.argv),
        "git_commit": commit,
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": {
            "platform": platform.platform(),
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "processor": platform.processor() or platform.machine(),
        },
        "database": db_url.split("://")[0],
        "stored_jobs": args.jobs,
        "seed_seconds": round(seed_s, 1),
        "agent": "FAKE agent (tests/service/fake_agent.py): no LLM, no GPU",
        "targets": {"list_and_detail_p95_ms": 50, "health_p95_ms_under_load": 20},
        "results": results,
        "met": {
            "list_p95": results["list_page_50"]["p95_ms"] < 50 and results["list_filtered"]["p95_ms"] < 50,
            "detail_p95": results["detail"]["p95_ms"] < 50,
            "health_p95_under_load": results["health_with_jobs_in_flight"]["p95_ms"] < 20,
        },
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=2) + "\n")
    print(json.dumps(doc, indent=2))


if __name__ == "__main__":
    main()
