"""The profile the planner is sent: the rendered text, whole or cut to the job's token budget, with
the tokens it costs (recorded in the state, the planner's LLM call and the `profile` event)."""

from __future__ import annotations

from typing import Any

from profiling.budget import fit_to_budget

from ..contract import JobSpec, Profile


def taken(of: str, profile: Profile) -> dict[str, Any]:
    """A profile as the state keeps it (`current_profile`, and the baseline's): what the profiler said."""
    return {
        "of": of,
        "text": profile.text,
        "note": profile.note,
        "bottleneck": profile.bottleneck_class,
        "mode": profile.mode,
        "metrics": dict(profile.metrics),
    }


def sent(spec: JobSpec, current: dict[str, Any]) -> dict[str, Any]:
    """`current` (a `taken` profile) as the next planner is sent it."""
    text = current.get("text") or ""
    fitted = fit_to_budget(text, spec.profile_token_budget) if text else None
    return {
        "of": current["of"],
        "text": fitted.text if fitted else "",
        "note": current.get("note", ""),
        "bottleneck": current.get("bottleneck", ""),
        "metrics": current.get("metrics") or {},
        "mode": spec.profile_mode,
        "tokens": fitted.tokens if fitted else 0,
        "budget": spec.profile_token_budget,
        "lines_cut": fitted.lines_cut if fitted else 0,
    }
