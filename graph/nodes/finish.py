"""The job's result: the best correct kernel over all rounds by P, or none, with everything tried kept."""

from __future__ import annotations

from typing import Any

from bench_tasks.harness.result import SanitizerStatus, sanitizer_status

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
            f"P = {best['score']:.3f}, after {tried} attempt(s){_sanitizer_note(state)}",
        }
    verdicts = sorted({a["verdict"] for a in state.get("attempts", [])})
    return {
        "status": "no_correct_kernel",
        "message": f"{stopped}no correct kernel in {tried} attempt(s) (verdicts: {', '.join(verdicts) or 'none'}){_sanitizer_note(state)}",
    }


def _sanitizer_note(state: dict[str, Any]) -> str:
    """What compute-sanitizer said of the best kernel, and how many correct kernels it kept from being the result."""
    best = state.get("best") or {}
    status = sanitizer_status(best.get("sanitizer"))
    note = ""
    if status == SanitizerStatus.not_run:
        reason = next((v.get("reason", "") for v in best["sanitizer"] if v.get("status") == "not_run"), "")
        note = f"; compute-sanitizer: not_run ({reason})"
    elif status is not None:
        note = f"; compute-sanitizer: {status.value}"
    flagged = sum(1 for a in state.get("attempts", []) if sanitizer_status(a.get("sanitizer")) == SanitizerStatus.findings)
    if flagged:
        note += f"; {flagged} correct kernel(s) with sanitizer findings kept out of the result"
    return note
