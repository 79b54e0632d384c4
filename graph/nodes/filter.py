"""Filter: choose and fit what the next planner sees. The profile shown is always the best
kernel's: the round's kernel's profile replaces it only when that kernel is the new best. It is
sent whole, or cut to the job's token budget (profile_token_budget; graph/nodes/sent_profile.py)."""

from __future__ import annotations

from typing import Any

from ..deps import Deps
from .sent_profile import sent


def run(state: dict[str, Any], deps: Deps) -> dict[str, Any]:
    current = state.get("current_profile")
    best = state.get("best")
    if not current or not best or best["attempt_id"] != current["of"]:
        return {}
    return {"profile": sent(deps.spec, current)}
