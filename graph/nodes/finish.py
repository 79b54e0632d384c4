"""The job's result: the best correct kernel over all rounds by P, or none, with everything tried kept."""

from __future__ import annotations

from typing import Any

from ..deps import Deps


def run(state: dict[str, Any], deps: Deps) -> dict[str, Any]:
    best = state.get("best")
    tried = len(state.get("attempts", []))
    if best:
        return {
            "status": "finished",
            "message": f"best kernel: round {best['round']} ({best['attempt_id']}), P = {best['score']:.3f}, after {tried} attempt(s)",
        }
    verdicts = sorted({a["verdict"] for a in state.get("attempts", [])})
    return {
        "status": "no_correct_kernel",
        "message": f"no correct kernel in {tried} attempt(s) (verdicts: {', '.join(verdicts) or 'none'})",
    }
