"""Screenshots of every dashboard page, for docs/screenshots/ (the README shows one).

Starts the real service (uvicorn, the FAKE scripted agent of tests/service/fake_agent.py: made-up
timings, no GPU, no LLM) on a fresh SQLite database, runs a few jobs through it (one waiting for a
person, one flagged for review) and a campaign over a few variants, and photographs each page in headless Chromium at 1280x800, plus the
job page on a narrow (390 px) screen. The comparison pages: two vector_add jobs side by side, and three
campaigns over the same variants, one per profile mode (none, full, filtered), run by a second service with
the fake agent's varied outcomes (FAKE_AGENT_VARIED=1: profile tokens and bottleneck classes per variant).

    python scripts/dashboard_screenshots.py [--out docs/screenshots] [--only compare-jobs,compare-campaigns]

Needs the dev extras (playwright) and Debian's chromium (apt-get install -y chromium).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.service import browser  # noqa: E402
from tests.service.conftest import Server, make_key, wait_status  # noqa: E402

API = "/api/v1"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "screenshots")
    parser.add_argument("--only", default="", help="comma-separated screenshot names to write (default: all)")
    args = parser.parse_args()
    only = {n for n in args.only.split(",") if n}

    def wanted(name: str) -> bool:
        return not only or name in only

    if (why := browser.missing()) is not None:
        raise SystemExit(why)
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        db = f"sqlite:///{tmp}/service.db"
        member = make_key(db, "alice", role="member")
        reviewer = make_key(db, "riley (reviewer)", role="reviewer")
        server = Server(db, Path(tmp), CUDAMASTER_HARNESS__REVIEW_SPEEDUP="4.5", FAKE_AGENT_STEP_SECONDS="0.05").start()
        try:
            with httpx.Client(base_url=server.url, headers={"X-API-Key": member}, timeout=60) as client:
                ids = []
                for task, rounds in (("vector_add", 4), ("softmax", 3), ("matrix_mul", 2), ("RELU", 1), ("layer_norm", 3)):
                    r = client.post(f"{API}/jobs", json={"task": task, "rounds": rounds, "debug": 2, "models": {"coder": "fake-model"}})
                    ids.append(r.json()["id"])
                manual = client.post(f"{API}/jobs", json={"task": "gelu", "rounds": 2, "manual": True}).json()["id"]
                variants = ["vector_add/fp32", "vector_add/bf16", "softmax/fp32", "RELU/fp32", "RELU/bf16", "layer_norm/fp32"]
                campaign = client.post(
                    f"{API}/campaigns",
                    json={"name": "six variants, R=2", "selection": {"variants": variants}, "config": {"rounds": 2, "debug": 1}},
                ).json()["id"]
                for job_id in ids:
                    wait_status(client, f"{API}/jobs/{job_id}", {}, {"finished"})
                wait_status(client, f"{API}/jobs/{manual}", {}, {"waiting_for_input"})
                wait_status(client, f"{API}/campaigns/{campaign}", {}, {"finished"}, timeout=120)
            shots = {
                "login": "/login",
                "jobs": "/jobs",
                "job": f"/jobs/{ids[0]}",
                "job-waiting": f"/jobs/{manual}",
                "leaderboard": "/leaderboard",
                "costs": "/costs",
                "campaigns": "/campaigns",
                "campaign": f"/campaigns/{campaign}",
                "reviews": "/reviews",
            }
            with browser.chromium() as chromium:
                context = chromium.new_context(viewport={"width": 1280, "height": 800})
                page = context.new_page()
                page.goto(f"{server.url}/login")
                if wanted("login"):
                    page.screenshot(path=str(args.out / "login.png"))
                browser.sign_in(page, server.url, reviewer)
                for name, path in shots.items():
                    if name == "login" or not wanted(name):
                        continue
                    page.goto(server.url + path)
                    page.wait_for_load_state("networkidle") if name not in ("jobs", "job", "job-waiting") else page.wait_for_timeout(1500)
                    page.screenshot(path=str(args.out / f"{name}.png"), full_page=True)
                    print(f"{args.out / name}.png")
                if wanted("job-narrow"):
                    narrow = chromium.new_context(viewport={"width": 390, "height": 844}, device_scale_factor=1)
                    npage = narrow.new_page()
                    browser.sign_in(npage, server.url, reviewer)
                    npage.goto(f"{server.url}/jobs/{ids[0]}")
                    npage.wait_for_timeout(1500)
                    npage.screenshot(path=str(args.out / "job-narrow.png"), full_page=True)
                    print(f"{args.out / 'job-narrow'}.png")
                if wanted("compare-jobs"):
                    compare_jobs_shot(page, server.url, member, ids[0], args.out)
        finally:
            server.stop()
        if wanted("compare-campaigns"):
            compare_campaigns_shot(Path(tmp), args.out)


def _shoot(page: object, url: str, path: Path) -> None:
    page.goto(url)  # type: ignore[attr-defined]
    page.wait_for_load_state("networkidle")  # type: ignore[attr-defined]
    page.screenshot(path=str(path), full_page=True)  # type: ignore[attr-defined]
    print(path)


def compare_jobs_shot(page: object, url: str, key: str, first: str, out: Path) -> None:
    """Another vector_add job (R=2) beside the first one (R=4)."""
    with httpx.Client(base_url=url, headers={"X-API-Key": key}, timeout=60) as client:
        other = client.post(f"{API}/jobs", json={"task": "vector_add", "rounds": 2, "debug": 1}).json()["id"]
        wait_status(client, f"{API}/jobs/{other}", {}, {"finished"})
    _shoot(page, f"{url}/compare/jobs?ids={first},{other}", out / "compare-jobs.png")


def compare_campaigns_shot(tmp: Path, out: Path) -> None:
    """Three campaigns over the same variants, one per profile mode, on a second service (varied outcomes)."""
    db = f"sqlite:///{tmp}/campaigns.db"
    key = make_key(db, "alice", role="member")
    server = Server(db, tmp, FAKE_AGENT_VARIED="1", FAKE_AGENT_STEP_SECONDS="0", CUDAMASTER_SERVICE__MAX_RUNNING_JOBS="4").start()
    try:
        variants = ["vector_add/fp32", "vector_add/bf16", "softmax/fp32", "RELU/fp32", "RELU/bf16", "layer_norm/fp32", "gelu/fp32"]
        with httpx.Client(base_url=server.url, headers={"X-API-Key": key}, timeout=60) as client:
            ids = []
            for mode in ("none", "full", "filtered"):
                body = {
                    "name": f"profile {mode}",
                    "selection": {"variants": variants},
                    "config": {"rounds": 3, "debug": 1, "profile_mode": mode},
                }
                ids.append(client.post(f"{API}/campaigns", json=body).json()["id"])
            for cid in ids:
                wait_status(client, f"{API}/campaigns/{cid}", {}, {"finished"}, timeout=120)
        with browser.chromium() as chromium:
            page = chromium.new_context(viewport={"width": 1280, "height": 800}).new_page()
            browser.sign_in(page, server.url, key)
            _shoot(page, f"{server.url}/compare/campaigns?ids={','.join(ids)}", out / "compare-campaigns.png")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
