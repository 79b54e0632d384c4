"""Profile (GPU) the round's correct kernel. A missing profiler gives an empty profile and a note."""

from __future__ import annotations

from typing import Any

from ..deps import Deps, spec_of


def run(state: dict[str, Any], deps: Deps) -> dict[str, Any]:
    spec = spec_of(state)
    of = state["attempts"][-1]["attempt_id"]
    if spec.profile_mode == "none":
        return {"current_profile": {"of": of, "text": "", "note": "profiling switched off for this job", "bottleneck": ""}}
    rows = (state["attempts"][-1].get("evaluation") or {}).get("rows")
    result = deps.evaluator.profile(spec.task, spec.precision, state["source"], spec.profile_mode, rows)
    return {"current_profile": {"of": of, "text": result.text, "note": result.note, "bottleneck": result.bottleneck}}
