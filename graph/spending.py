"""The job's spending cap (JobSpec.spending_cap): may the job make another LLM call, and how long may its
answer be?

What counts: every call of the job, those in the graph's state and those only the service's ledger knows
(a call lost in flight when its process died counts at its recorded estimate: the prompt's exact tokens
plus the `max_tokens` it was sent with). The service hands that ledger's totals in with `recorded(...)`;
without one (the CLI), the state's calls are all there is.

Two checks keep the job at or under its cap:
- Routing (`reached`, asked before every step that calls an LLM: graph/builder.py, nodes/round_end.py):
  no call starts once the spending is at the cap or a call as large as the largest one so far would pass it.
- The call itself (`allowance`, in graph/llm.py just before sending): the prompt's tokens are counted
  exactly, and the call goes out only with `max_tokens` bounding its answer so that input + output (and
  their price) stay within what is left; otherwise it is refused (`CapRefused`) and the job ends at the cap.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from settings import AgentSettings, Price

from .contract import JobSpec, LlmCall


@dataclass(frozen=True)
class Spent:
    tokens: int = 0  # input + output
    usd: float = 0.0


class CapRefused(Exception):
    """A call was not sent: its prompt plus the smallest useful answer would pass the spending cap.
    Not an LLM error: the node ends the round and the job stops with stop_reason spending_cap."""


# The job's calls as the service's ledger has them (every stored call: paid, in flight, lost in flight), by
# call key (`call_key`: the call id, and `#<send id>` when it has one).
RecordedSpending = Callable[[], dict[str, Spent]]
_recorded: ContextVar[RecordedSpending | None] = ContextVar("cudamaster_recorded_spending", default=None)


@contextmanager
def recorded(source: RecordedSpending | None) -> Iterator[None]:
    """Within this block (and the graph's node threads it starts), the cap also counts what `source` says."""
    token = _recorded.set(source)
    try:
        yield
    finally:
        _recorded.reset(token)


def _calls(llm_calls: list[dict[str, Any]]) -> list[LlmCall]:
    return [LlmCall.model_validate(c) for c in llm_calls]


def call_key(call: LlmCall) -> str:
    """The key a call is stored under (app/store/events.py): a call sent again after a crash is a row of its own."""
    return (f"{call.call_id}#{call.send_id}" if call.send_id else call.call_id)[:160]


def spent(llm_calls: list[dict[str, Any]]) -> Spent:
    """What the job has spent: the state's calls, and the ledger's other calls (lost in flight, or sent by a
    run whose checkpoint was lost). A call in both counts once, as the state has it (the ledger may still
    hold its `sent` estimate)."""
    calls = _calls(llm_calls)
    tokens = sum(c.input_tokens + c.output_tokens for c in calls)
    usd = sum(c.cost_usd for c in calls)
    source = _recorded.get()
    if source is not None:
        known = {call_key(c) for c in calls}
        for key, other in source().items():
            if key not in known:
                tokens, usd = tokens + other.tokens, usd + other.usd
    return Spent(tokens, round(usd, 8))


def reached(spec: JobSpec, llm_calls: list[dict[str, Any]]) -> bool:
    cap = spec.spending_cap
    if cap is None:
        return False
    calls = _calls(llm_calls)
    total = spent(llm_calls)
    if cap.tokens is not None:
        largest = max((c.input_tokens + c.output_tokens for c in calls), default=0)
        if total.tokens >= cap.tokens or total.tokens + largest > cap.tokens:
            return True
    if cap.usd is not None:
        largest_usd = max((c.cost_usd for c in calls), default=0.0)
        if total.usd >= cap.usd or total.usd + largest_usd > cap.usd:
            return True
    return False


def allowance(spec: JobSpec, settings: AgentSettings, model: str, input_tokens: int, llm_calls: list[dict[str, Any]]) -> int | None:
    """The `max_tokens` a call with `input_tokens` of prompt may be sent with (None: the job has no cap, no
    bound): what is left, and no more than `settings.max_output_tokens` (the call reserves what it can use, not
    everything left). Raises CapRefused when what is left cannot take the prompt and `settings.min_output_tokens`."""
    cap = spec.spending_cap
    if cap is None:
        return None
    total = spent(llm_calls)
    bounds = []
    if cap.tokens is not None:
        bounds.append(cap.tokens - total.tokens - input_tokens)
    if cap.usd is not None:
        price = settings.price(model)
        if price is not None:  # an unpriced model under a dollar cap is refused at start (`unenforceable`)
            bounds.append(_output_within(cap.usd - total.usd, input_tokens, price))
    if not bounds:
        return None
    allowed = min(bounds)
    if allowed < settings.min_output_tokens:
        raise CapRefused(
            f"the call's prompt of {input_tokens} tokens and an answer of at least {settings.min_output_tokens} tokens "
            f"would pass the spending cap ({describe_total(spec, total)})"
        )
    return min(allowed, settings.max_output_tokens)


def failed_charge(input_tokens: int, max_tokens: int | None, *, reached: bool, may_have_generated: bool) -> tuple[int, int]:
    """(input, output) tokens a failed call is charged as an estimate: nothing when it never reached the
    endpoint (or was refused before any work: 4xx, 429); its prompt when the endpoint took it and answered an
    error; its prompt and its `max_tokens` when the endpoint may have generated (a timeout, a truncated or
    unreadable reply). Providers bill many of these; the cap counts them."""
    if not reached:
        return 0, 0
    return input_tokens, (max_tokens or 0) if may_have_generated else 0


def _output_within(usd_left: float, input_tokens: int, price: Price) -> int:
    """How many output tokens fit in `usd_left` after the prompt (cached input counted at the full price)."""
    left = usd_left * 1e6 - input_tokens * price.input
    if price.output <= 0:
        return 2**31 - 1 if left >= 0 else -1
    return math.floor(left / price.output * (1 - 1e-9))


def describe(spec: JobSpec, llm_calls: list[dict[str, Any]]) -> str:
    """'spent $0.0123 of $0.02 and 9000 of 10000 tokens' (only the caps the job has)."""
    return describe_total(spec, spent(llm_calls))


def describe_total(spec: JobSpec, total: Spent) -> str:
    cap = spec.spending_cap
    if cap is None:
        return "no spending cap"
    parts = []
    if cap.usd is not None:
        parts.append(f"${total.usd:.4f} of ${cap.usd:g}")
    if cap.tokens is not None:
        parts.append(f"{total.tokens} of {cap.tokens} tokens")
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
