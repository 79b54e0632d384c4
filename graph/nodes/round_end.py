"""End of a round: record its outcome (strategy, verdict, P, tokens, cost) and start the next.

When the spending cap is reached and the routing cut the job short (the round ended without code, a
failure was not debugged, or rounds are left), the job's `stop_reason` becomes "spending_cap"."""

from __future__ import annotations

from typing import Any

from .. import spending
from ..contract import SPENDING_CAP, RoundSummary
from ..deps import Deps


def run(state: dict[str, Any], deps: Deps) -> dict[str, Any]:
    spec = deps.spec
    r = state["round"]
    tried = [a for a in state.get("attempts", []) if a["round"] == r]
    last = tried[-1] if tried else None
    calls = [c for c in state.get("llm_calls", []) if c["round"] == r]
    strategy = state.get("strategy", "")
    entry = RoundSummary(
        round=r,
        strategy=strategy,
        strategy_title=(strategy.strip().splitlines() or [""])[0][:120],
        verdict=last["verdict"] if last else "no_attempt",
        message=last["message"] if last else "",
        score=last["score"] if last else None,
        attempt_id=last["attempt_id"] if last else None,
        debug_steps=max((a["debug_step"] for a in tried), default=0),
        input_tokens=sum(c["input_tokens"] for c in calls),
        output_tokens=sum(c["output_tokens"] for c in calls),
        cost_usd=round(sum(c["cost_usd"] for c in calls), 8),
    )
    more = len(state.get("round_log", [])) + 1 < spec.rounds
    update: dict[str, Any] = {
        "round_log": [entry.model_dump(mode="json")],
        "round": r + 1 if more else r,
        "debug_step": 0,
        "failure": None,
        "current_profile": None,
    }
    undebugged = state.get("failure") is not None and state.get("debug_step", 0) < spec.debug
    capped = bool(state.get("spending_refused")) or spending.reached(spec, state.get("llm_calls", []))
    if capped and (more or last is None or undebugged):
        update["stop_reason"] = SPENDING_CAP
    return update
