"""Building attempt records (shared by compile and verify, the nodes that decide verdicts)."""

from __future__ import annotations

from typing import Any

from ..contract import Attempt
from ..state import attempt_id


def attempt(state: dict[str, Any], verdict: str, message: str, compile_log: str, evaluation: dict | None) -> dict[str, Any]:
    debug_step = state.get("debug_step", 0)
    record = Attempt(
        attempt_id=attempt_id(state["job_id"], state["round"], debug_step),
        job_id=state["job_id"],
        round=state["round"],
        debug_step=debug_step,
        role="coder" if debug_step == 0 else "debugger",
        strategy=state.get("strategy", ""),
        source=state.get("source", ""),
        flags=list(state.get("flags", [])),
        compile_log=compile_log[-20000:],
        verdict=verdict,
        message=message,
        score=evaluation.get("score") if evaluation else None,
        evaluation=evaluation,
    )
    return record.model_dump(mode="json")
