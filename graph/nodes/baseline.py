"""Before round 1: evaluate and profile the baseline so the first plan has data.

A baseline that does not evaluate `ok` (it fails to build, is rejected, crashes or times out on the
GPU) ends the job here with a `baseline` failure: no planner is ever given a broken baseline, and no
candidate is judged against its output."""

from __future__ import annotations

from typing import Any

from gpu.protocol import no_profile

from ..deps import Deps
from .sent_profile import sent, taken


class BaselineFailed(RuntimeError):
    """The task's baseline did not evaluate ok; the job fails before any LLM call."""


def run(state: dict[str, Any], deps: Deps) -> dict[str, Any]:
    spec = deps.spec
    evaluation = deps.evaluator.evaluate(deps.evaluate_request(None))
    if not evaluation.ok:
        raise BaselineFailed(
            f"baseline: {evaluation.verdict.value}: {evaluation.message} (the task's baseline must build "
            "and run correctly before any candidate can be judged against it; fix the baseline and submit again)"
        )
    if spec.profile_mode == "none":
        profile = no_profile("profiling switched off for this job")
    else:
        rows = evaluation.model_dump(mode="json")["rows"]
        profile = deps.evaluator.profile(deps.profile_request(None, rows))
    return {
        "baseline": {
            "evaluation": evaluation.model_dump(mode="json"),
            "profile": profile.text,
            "profile_note": profile.note,
            "bottleneck": profile.bottleneck_class,
        },
        "profile": sent(spec, taken("baseline", profile)),
        "round": 1,
        "debug_step": 0,
        "status": "running",
        "message": "",
    }
