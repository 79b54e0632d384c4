"""The job's result: the best correct kernel over all rounds by P, or none, with everything tried kept."""

from __future__ import annotations

from typing import Any

from .. import spending
from ..contract import SPENDING_CAP
from ..deps import Deps


def run(state: dict[str, Any], deps: Deps) -> dict[str, Any]:
    best = state.get("best")
    tried = len(state.get("attempts", []))
    stopped = ""
    if state.get("stop_reason") == SPENDING_CAP:
        stopped = (
            f"stopped at the spending cap after {len(state.get('round_log', []))} of {deps.spec.rounds} round(s) "
            f"({spending.describe(deps.spec, state.get('llm_calls', []))}); "
        )
    if best:
        return {
            "status": "finished",
            "message": f"{stopped}best kernel: round {best['round']} ({best['attempt_id']}), "
            f"P = {best['score']:.3f}, after {tried} attempt(s)",
        }
    verdicts = sorted({a["verdict"] for a in state.get("attempts", [])})
    return {
        "status": "no_correct_kernel",
        "message": f"{stopped}no correct kernel in {tried} attempt(s) (verdicts: {', '.join(verdicts) or 'none'})",
    }
