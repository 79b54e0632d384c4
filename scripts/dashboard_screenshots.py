"""Screenshots of every dashboard page, for docs/screenshots/ (the README shows one).

Starts the real service (uvicorn, the FAKE scripted agent of tests/service/fake_agent.py: made-up
timings, no GPU, no LLM) on a fresh SQLite database, runs a few jobs through it (one waiting for a
person, one flagged for review) and a campaign over a few variants, and photographs each page in headless Chromium at 1280x800;
the jobs list, a job, a campaign, the campaign form and the costs page also on a narrow (390 px) screen (`*-narrow.png`). The comparison pages: two vector_add jobs side by side, and three
campaigns over the same variants, one per profile mode (none, full, filtered), run by a second service with
the fake agent's varied outcomes (FAKE_AGENT_VARIED=1: profile tokens and bottleneck classes per variant).

    python scripts/dashboard_screenshots.py [--out docs/screenshots] [--only compare-jobs,compare-campaigns]

Needs the dev extras (playwright) and Debian's chromium (apt-get install -y chromium).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.service import browser  # noqa: E402
from tests.service.conftest import Server, make_key, wait_status  # noqa: E402

API = "/api/v1"


@dataclass
class Site:
    """A running service with demo data: jobs (one waiting for a person, some flagged for review) and a campaign."""

    server: Server
    member: str
    reviewer: str
    jobs: list[str]
    manual: str
    campaign: str


@contextmanager
def demo_site(tmp: Path) -> Iterator[Site]:
    db = f"sqlite:///{tmp}/service.db"
    member = make_key(db, "alice", role="member")
    reviewer = make_key(db, "riley (reviewer)", role="reviewer")
    server = Server(db, tmp, CUDAMASTER_HARNESS__REVIEW_SPEEDUP="4.5", FAKE_AGENT_STEP_SECONDS="0.05").start()
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
        yield Site(server, member, reviewer, ids, manual, campaign)
    finally:
        server.stop()


# The pages shot at both widths (1280 and 390 px: `NAME.png` and `NAME-narrow.png`), and those at 1280 only.
BOTH_WIDTHS = ("jobs", "job", "campaign", "campaign-form", "costs")
WIDE_ONLY = ("job-waiting", "leaderboard", "campaigns", "reviews")
WIDTHS = {"": 1280, "-narrow": 390}


def pages_of(site: Site) -> dict[str, str]:
    return {
        "jobs": "/jobs",
        "job": f"/jobs/{site.jobs[0]}",
        "job-waiting": f"/jobs/{site.manual}",
        "leaderboard": "/leaderboard",
        "costs": "/costs",
        "campaigns": "/campaigns",
        "campaign": f"/campaigns/{site.campaign}",
        "campaign-form": "/campaigns/new",
        "reviews": "/reviews",
    }


def shoot_pages(chromium: Any, site: Site, out: Path, wanted: Callable[[str], bool]) -> None:
    """Each page at each width; the campaign form as the member (a key that may start one), the rest as the reviewer."""
    paths = pages_of(site)
    for suffix, width in WIDTHS.items():
        viewport = {"width": width, "height": 800 if width > 500 else 844}
        pages = {}
        for who, key in (("reviewer", site.reviewer), ("member", site.member)):
            context = chromium.new_context(viewport=viewport, device_scale_factor=1)
            pages[who] = context.new_page()
            if who == "reviewer" and not suffix and wanted("login"):
                pages[who].goto(f"{site.server.url}/login")
                pages[who].screenshot(path=str(out / "login.png"))
            browser.sign_in(pages[who], site.server.url, key)
        for name in BOTH_WIDTHS + (WIDE_ONLY if not suffix else ()):
            if not wanted(name + suffix):
                continue
            page = pages["member" if name == "campaign-form" else "reviewer"]
            page.goto(site.server.url + paths[name])
            page.wait_for_load_state("networkidle") if name not in ("jobs", "job", "job-waiting") else page.wait_for_timeout(1500)
            page.screenshot(path=str(out / f"{name}{suffix}.png"), full_page=True)
            print(out / f"{name}{suffix}.png")
        for page in pages.values():
            page.context.close()


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
    with tempfile.TemporaryDirectory() as tmp, demo_site(Path(tmp)) as site:
        with browser.chromium() as chromium:
            shoot_pages(chromium, site, args.out, wanted)
            if wanted("compare-jobs"):
                page = chromium.new_context(viewport={"width": 1280, "height": 800}).new_page()
                browser.sign_in(page, site.server.url, site.reviewer)
                compare_jobs_shot(page, site.server.url, site.member, site.jobs[0], args.out)
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
