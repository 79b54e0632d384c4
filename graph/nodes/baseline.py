"""Before round 1: evaluate and profile the baseline so the first plan has data."""

from __future__ import annotations

from typing import Any

from ..deps import Deps, spec_of
from ..evaluator import ProfileResult
from .sent_profile import sent


def run(state: dict[str, Any], deps: Deps) -> dict[str, Any]:
    spec = spec_of(state)
    evaluation = deps.evaluator.evaluate(spec.task, spec.precision, None, spec.sizes, [])
    if spec.profile_mode == "none":
        profile = ProfileResult("", "profiling switched off for this job")
    else:
        rows = evaluation.model_dump(mode="json")["rows"]
        profile = deps.evaluator.profile(spec.task, spec.precision, None, spec.profile_mode, rows)
    return {
        "baseline": {
            "evaluation": evaluation.model_dump(mode="json"),
            "profile": profile.text,
            "profile_note": profile.note,
            "bottleneck": profile.bottleneck,
        },
        "profile": sent(spec, "baseline", profile.text, profile.note, profile.bottleneck),
        "round": 1,
        "debug_step": 0,
        "status": "running",
        "message": "" if evaluation.ok else f"the baseline evaluation ended {evaluation.verdict.value}: {evaluation.message}",
    }
