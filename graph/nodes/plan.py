"""The planner: one strategy from the profile, the best kernel's results and the history. No code."""

from __future__ import annotations

from typing import Any

from .. import llm, prompting
from ..deps import Deps


def run(state: dict[str, Any], deps: Deps) -> dict[str, Any]:
    spec = deps.spec
    profile = state.get("profile") or {}
    user = prompting.render(
        "planner",
        **prompting.best_context(state, deps.variant),
        profile=profile.get("text") or "(no profile)",
        profile_note=profile.get("note") or "",
        history=prompting.history_text(state),
        round=state["round"],
        rounds=spec.rounds,
    )
    text, record = llm.ask(state, "planner", prompting.system_prompt("planner", deps), user, deps)
    # What the profile cost in this call's prompt (the ablation's "tokens sent per profile mode").
    record = record | {"profile_mode": spec.profile_mode, "profile_tokens": int(profile.get("tokens") or 0)}
    strategy = text.strip() or "(the planner gave no strategy: make the kernel faster while keeping it correct)"
    return {"strategy": strategy, "debug_step": 0, "failure": None, "current_profile": None, "llm_calls": [record]}
