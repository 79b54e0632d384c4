"""Filter: choose and trim what the next planner sees. The profile shown is always the best
kernel's: the round's kernel's profile replaces it only when that kernel is the new best."""

from __future__ import annotations

from typing import Any

from ..deps import Deps


def run(state: dict[str, Any], deps: Deps) -> dict[str, Any]:
    current = state.get("current_profile")
    best = state.get("best")
    if not current or not best or best["attempt_id"] != current["of"]:
        return {}
    text = current["text"]
    limit = deps.settings.profile_max_chars
    if len(text) > limit:
        text = text[:limit] + f"\n[... profile cut at {limit} characters]"
    return {"profile": {"of": current["of"], "text": text, "note": current["note"]}}
