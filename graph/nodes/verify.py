"""Verify (GPU): check and time the compiled kernel against the baseline; decides the attempt's verdict."""

from __future__ import annotations

from typing import Any

from ..deps import Deps
from ..state import best_of
from .records import attempt


def run(state: dict[str, Any], deps: Deps) -> dict[str, Any]:
    result = deps.evaluator.evaluate(deps.evaluate_request(state["source"], state.get("flags", [])))
    evaluation = result.model_dump(mode="json")
    record = attempt(state, result.verdict.value, result.message, state.get("compile_log", ""), evaluation)
    update: dict[str, Any] = {"attempts": [record]}
    if result.ok:
        update["best"] = best_of(state.get("best"), record)
        update["failure"] = None
    else:
        update["failure"] = {"verdict": result.verdict.value, "message": result.message, "log": result.log[-8000:]}
    return update
