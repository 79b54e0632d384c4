"""What the planner is sent: a rendered profile given whole, or cut to an explicit token budget.

The cut keeps whole lines from the top (renderers put the most telling lines first) and ends with a
line that says it was cut, to which budget and how much was left out, so neither the model nor the
reader of a report mistakes a cut profile for a whole one. Tokens are counted with profiling.tokens.
"""

from __future__ import annotations

from dataclasses import dataclass

from .tokens import count_tokens

MIN_BUDGET = 64  # room for the cut line and a few metrics


@dataclass(frozen=True)
class SentProfile:
    text: str
    tokens: int  # tokens of `text`, as sent
    budget: int | None  # None: given whole
    lines_cut: int  # 0 when whole
    exact: bool  # tokens counted by tiktoken (False: estimated, see profiling.tokens)


def cut_line(budget: int, cut: int, total: int) -> str:
    return f"[profile cut to the {budget}-token budget: the last {cut} of {total} lines left out]"


def fit_to_budget(text: str, budget: int | None) -> SentProfile:
    """`text` whole when it fits (or budget is None), else its longest head of whole lines that fits
    together with the cut line."""
    if budget is not None and budget < MIN_BUDGET:
        raise ValueError(
            f"a profile token budget of {budget} is too small: give at least {MIN_BUDGET} tokens, or none to send profiles whole"
        )
    whole = count_tokens(text)
    if budget is None or whole.tokens <= budget:
        return SentProfile(text, whole.tokens, budget, 0, whole.exact)
    lines = text.splitlines()

    def attempt(keep: int) -> tuple[str, int]:
        out = "\n".join([*lines[:keep], cut_line(budget, len(lines) - keep, len(lines))])
        return out, count_tokens(out).tokens

    lo, hi = 0, len(lines) - 1  # the most lines that fit lies in [lo, hi]
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if attempt(mid)[1] <= budget:
            lo = mid
        else:
            hi = mid - 1
    out, tokens = attempt(lo)
    return SentProfile(out, tokens, budget, len(lines) - lo, whole.exact)
