"""Profile (GPU) the round's correct kernel. A missing profiler gives an empty profile and a note.

The profile becomes a record of that attempt (a contract.ProfileEvent, graph/runner.py): its bottleneck
class, metrics, text and mode; the filter node fits what the planner is sent to the job's token budget."""

from __future__ import annotations

from typing import Any

from gpu.protocol import no_profile

from ..deps import Deps
from .sent_profile import taken


def run(state: dict[str, Any], deps: Deps) -> dict[str, Any]:
    spec = deps.spec
    of = state["attempts"][-1]["attempt_id"]
    if spec.profile_mode == "none":
        result = no_profile("profiling switched off for this job")
    else:
        rows = (state["attempts"][-1].get("evaluation") or {}).get("rows")
        result = deps.evaluator.profile(deps.profile_request(state["source"], rows))
    # `profiles`: each attempt's profile as the Outcome reports it (graph/runner.py).
    return {"current_profile": taken(of, result), "profiles": [{"attempt_id": of, "profile": result.model_dump(mode="json")}]}
