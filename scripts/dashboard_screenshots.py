"""Screenshots of every dashboard page, for docs/screenshots/ (the README shows one).

Starts the real service (uvicorn, the FAKE scripted agent of tests/service/fake_agent.py: made-up
timings, no GPU, no LLM) on a fresh SQLite database, runs a few jobs through it (one waiting for a
person, one flagged for review) and a campaign over a few variants, and photographs each page in headless Chromium at 1280x800, plus the
job page on a narrow (390 px) screen.

    python scripts/dashboard_screenshots.py [--out docs/screenshots]

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
    args = parser.parse_args()
    if (why := browser.missing()) is not None:
        raise SystemExit(why)
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        db = f"sqlite:///{tmp}/service.db"
        member = make_key(db, "alice", role="member")
        reviewer = make_key(db, "riley (reviewer)", role="reviewer")
        server = Server(db, Path(tmp), CUDAMASTER_SERVICE__REVIEW_SPEEDUP="4.5", FAKE_AGENT_STEP_SECONDS="0.05").start()
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
                page.screenshot(path=str(args.out / "login.png"))
                browser.sign_in(page, server.url, reviewer)
                for name, path in shots.items():
                    if name == "login":
                        continue
                    page.goto(server.url + path)
                    page.wait_for_load_state("networkidle") if name not in ("jobs", "job", "job-waiting") else page.wait_for_timeout(1500)
                    page.screenshot(path=str(args.out / f"{name}.png"), full_page=True)
                    print(f"{args.out / name}.png")
                narrow = chromium.new_context(viewport={"width": 390, "height": 844}, device_scale_factor=1)
                npage = narrow.new_page()
                browser.sign_in(npage, server.url, reviewer)
                npage.goto(f"{server.url}/jobs/{ids[0]}")
                npage.wait_for_timeout(1500)
                npage.screenshot(path=str(args.out / "job-narrow.png"), full_page=True)
                print(f"{args.out / 'job-narrow'}.png")
        finally:
            server.stop()


if __name__ == "__main__":
    main()
