"""End of a round: record its outcome (strategy, verdict, P, tokens, cost) and start the next."""

from __future__ import annotations

from typing import Any

from ..deps import Deps, spec_of


def run(state: dict[str, Any], deps: Deps) -> dict[str, Any]:
    r = state["round"]
    tried = [a for a in state.get("attempts", []) if a["round"] == r]
    last = tried[-1] if tried else None
    calls = [c for c in state.get("llm_calls", []) if c["round"] == r]
    strategy = state.get("strategy", "")
    entry = {
        "round": r,
        "strategy": strategy,
        "strategy_title": (strategy.strip().splitlines() or [""])[0][:120],
        "verdict": last["verdict"] if last else "no_attempt",
        "message": last["message"] if last else "",
        "score": last["score"] if last else None,
        "attempt_id": last["attempt_id"] if last else None,
        "debug_steps": max((a["debug_step"] for a in tried), default=0),
        "input_tokens": sum(c["input_tokens"] for c in calls),
        "output_tokens": sum(c["output_tokens"] for c in calls),
        "cost_usd": round(sum(c["cost_usd"] for c in calls), 8),
    }
    more = len(state.get("round_log", [])) + 1 < spec_of(state).rounds
    return {"round_log": [entry], "round": r + 1 if more else r, "debug_step": 0, "failure": None, "current_profile": None}
