"""The profile the planner is sent: the rendered text, whole or cut to the job's token budget, with
the tokens it costs (recorded in the state, the planner's LLM call and the `profile` event)."""

from __future__ import annotations

from typing import Any

from profiling.budget import fit_to_budget

from ..settings import JobSpec


def sent(spec: JobSpec, of: str, text: str, note: str, bottleneck: str) -> dict[str, Any]:
    fitted = fit_to_budget(text, spec.profile_token_budget) if text else None
    return {
        "of": of,
        "text": fitted.text if fitted else "",
        "note": note,
        "bottleneck": bottleneck,
        "mode": spec.profile_mode,
        "tokens": fitted.tokens if fitted else 0,
        "budget": spec.profile_token_budget,
        "lines_cut": fitted.lines_cut if fitted else 0,
    }
