"""The job's spending cap (JobSpec.spending_cap): may the job make another LLM call?

A call starts only while the spending so far is below each cap and a call as large as the largest
one so far would stay within it. The graph's routing asks `reached` before every step that calls
an LLM and, when it is reached, ends the round and then the job (graph/builder.py, nodes/round_end.py).
"""

from __future__ import annotations

from typing import Any

from .contract import JobSpec, LlmCall
from .settings import AgentSettings


def _calls(llm_calls: list[dict[str, Any]]) -> list[LlmCall]:
    return [LlmCall.model_validate(c) for c in llm_calls]


def reached(spec: JobSpec, llm_calls: list[dict[str, Any]]) -> bool:
    cap = spec.spending_cap
    if cap is None:
        return False
    calls = _calls(llm_calls)
    if cap.tokens is not None:
        sizes = [c.input_tokens + c.output_tokens for c in calls]
        if sum(sizes) >= cap.tokens or sum(sizes) + max(sizes, default=0) > cap.tokens:
            return True
    if cap.usd is not None:
        costs = [c.cost_usd for c in calls]
        if sum(costs) >= cap.usd or sum(costs) + max(costs, default=0.0) > cap.usd:
            return True
    return False


def describe(spec: JobSpec, llm_calls: list[dict[str, Any]]) -> str:
    """'spent $0.0123 of $0.02 and 9000 of 10000 tokens' (only the caps the job has)."""
    cap = spec.spending_cap
    if cap is None:
        return "no spending cap"
    calls = _calls(llm_calls)
    parts = []
    if cap.usd is not None:
        parts.append(f"${sum(c.cost_usd for c in calls):.4f} of ${cap.usd:g}")
    if cap.tokens is not None:
        parts.append(f"{sum(c.input_tokens + c.output_tokens for c in calls)} of {cap.tokens} tokens")
    return "spent " + " and ".join(parts)


def unenforceable(spec: JobSpec, settings: AgentSettings) -> str | None:
    """Why the job's dollar cap cannot be kept (a role it calls has an unpriced model and no token cap
    backs it up), or None."""
    cap = spec.spending_cap
    if cap is None or cap.usd is None or cap.tokens is not None or spec.manual or spec.replay_file:
        return None
    roles = ["planner", "coder"] + (["debugger"] if spec.debug else [])
    if settings.choose_flags if spec.choose_flags is None else spec.choose_flags:
        roles.append("compiler")
    for role in roles:
        resolved = settings.role(role, spec.model_for(role))
        if resolved.has_endpoint and settings.price(resolved.model) is None:
            return (
                f"the spending cap of ${cap.usd:g} cannot be kept: the {role} role's model {resolved.model!r} has no "
                "price; add it to CUDAMASTER_AGENT__PRICES, or give the cap in tokens (spending_cap.tokens)"
            )
    return None
