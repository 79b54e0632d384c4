"""Figure for docs/results (issue 30): `/health` latency while the submit-time attack corpus runs (a benchmark,
not a test). Starts the real service (uvicorn, the FAKE agent: no job runs, every case is refused; SQLite in a
temporary directory), submits each case of tests/service/test_submit_attacks.py once (the expressions and sizes
one after another, then the three compile bombs at once, as the test does, at the test's 512 MiB memory limit),
and probes GET /api/v1/health every 50 ms on its own thread throughout. Writes, per case, the status code and
the time to refusal; for /health, the samples, p50/p99/max latency and the probes without an answer within 1 s.

    python scripts/health_during_attacks_figure.py [-o docs/results/health_during_attacks_<sha7>.json] [--note ...]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench_tasks.provenance import provenance  # noqa: E402
from tests.service.conftest import Server, make_key  # noqa: E402
from tests.service.test_api_with_fake_agent import CUSTOM  # noqa: E402
from tests.service.test_submit_attacks import COMPILE_BOMBS, EXPRESSION_BOUND_S, EXPRESSIONS, HealthProbe, _submit  # noqa: E402

BOMB_MEMORY_BYTES = 512 << 20  # as in test_compile_bombs_at_once_are_refused_at_the_memory_limit_...
BOMB_BOUND_S = 150.0
ANSWER_BOUND_S = 1.0


def outcome(response: httpx.Response | None, took: float) -> dict:
    """Status code, time to refusal and the refusal's message (first 200 characters) of one submit."""
    if response is None:
        return {"status": None, "seconds": round(took, 4), "message": "no answer"}
    try:
        detail = response.json()["detail"]
        message = detail[0]["msg"] if isinstance(detail, list) else str(detail)
    except (ValueError, KeyError, IndexError, TypeError):
        message = response.text
    return {"status": response.status_code, "seconds": round(took, 4), "message": message[:200]}


def submit(url: str, headers: dict, custom: dict, bound_s: float) -> dict:
    with httpx.Client(base_url=url) as client:
        try:
            return outcome(*_submit(client, headers, custom, bound_s))
        except httpx.HTTPError:
            return outcome(None, bound_s)


def run_bombs(url: str, headers: dict) -> dict[str, dict]:
    """The three compile bombs submitted at once, each on its own thread."""
    results: dict[str, dict] = {}

    def one(name: str) -> None:
        results[name] = submit(url, headers, CUSTOM | {"baseline_cu": COMPILE_BOMBS[name], "sizes": [{"N": 1024}]}, BOMB_BOUND_S)

    threads = [threading.Thread(target=one, args=(name,)) for name in COMPILE_BOMBS]
    for t in threads:
        t.start()
    for t in threads:
        t.join(BOMB_BOUND_S + 30)
    return {f"compile_bomb_{name}": results.get(name, outcome(None, BOMB_BOUND_S)) for name in COMPILE_BOMBS}


def percentile(sorted_values: list[float], q: float) -> float:
    """Nearest-rank percentile of an ascending list (as the test's HealthProbe.check)."""
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


def health_summary(latencies: list[float | None]) -> dict:
    answered = sorted(x for x in latencies if x is not None)
    late = sum(1 for x in latencies if x is None or x > ANSWER_BOUND_S)
    summary: dict = {"samples": len(latencies), "answered": len(answered), "without_answer_within_1s": late}
    if answered:
        summary |= {f"{name}_ms": round(percentile(answered, q) * 1e3, 2) for name, q in (("p50", 0.5), ("p99", 0.99))}
        summary["max_ms"] = round(answered[-1] * 1e3, 2)
    return summary


def machine() -> dict:
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return {"kind": "CPU only, no GPU", "cpu_count": os.cpu_count(), "memory_gib": round(memory / 2**30, 1)}


def measure() -> tuple[dict, dict]:
    """Runs the corpus against a fresh service; returns (cases, /health summary)."""
    with tempfile.TemporaryDirectory(prefix="cm-health-") as tmp:
        db = f"sqlite:///{Path(tmp) / 'service.db'}"
        headers = {"X-API-Key": make_key(db)}
        server = Server(db, Path(tmp), CUDAMASTER_HARNESS__SANDBOX_MAX_MEMORY_BYTES=str(BOMB_MEMORY_BYTES)).start()
        try:
            with HealthProbe(server.url) as probe:
                cases = {case: submit(server.url, headers, custom, EXPRESSION_BOUND_S) for case, custom, _ in EXPRESSIONS}
                cases |= run_bombs(server.url, headers)
        finally:
            server.stop()
    return cases, health_summary(probe.latencies)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-o", "--output", help="default docs/results/health_during_attacks_<sha7>.json")
    parser.add_argument("--note", default="", help="said in the JSON's note (e.g. what else the machine ran)")
    args = parser.parse_args()
    source = provenance()
    cases, health = measure()
    figure = {
        "what": "/health latency (GET every 50 ms, own thread, 5 s client timeout) while the submit-time attack corpus runs "
        "against the real service with the FAKE agent (tests/service/test_submit_attacks.py: each case once, the compile bombs three at once)",
        "provenance": source | {"machine": machine()},
        "compile_bomb_memory_limit_bytes": BOMB_MEMORY_BYTES,
        "note": args.note,
        "cases": cases,
        "health": health,
    }
    out = Path(args.output or REPO / "docs" / "results" / f"health_during_attacks_{source['git_commit'][:7]}.json")
    out.write_text(json.dumps(figure, indent=2) + "\n")
    print(json.dumps(figure, indent=2))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
