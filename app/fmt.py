"""One number format for everything a person reads: the dashboard's pages (Jinja filters, app/web/fmt.py; their
twins in app/web/static/dashboard.js, `cmFormat`, for live updates) and the campaign reports (app/campaigns/report.py:
Markdown, HTML, the campaign page's tables).

- `num`: thousands separators; an int as is, a float with 2 decimals (or `digits`).
- `p`: a score P (weighted speedup), always 3 decimals.
- `usd`: dollars with `$`, 4 decimals under $1, else 2.
- `pct`: a share (0..1) as a whole percent.
- `signed=True` (num, p, usd): a difference, with its sign (+1,234, -$0.0012); `points`: a difference of shares.
None is "–" everywhere.
"""

from __future__ import annotations

from typing import Any

NONE = "–"
P_DIGITS = 3


def num(value: Any, digits: int = 2, signed: bool = False) -> str:
    if value is None:
        return NONE
    sign = "+" if signed else ""
    if isinstance(value, int):
        return f"{value:{sign},}"
    return f"{value:{sign},.{digits}f}"


def p(value: Any, signed: bool = False) -> str:
    return num(None if value is None else float(value), P_DIGITS, signed)


def usd(value: Any, signed: bool = False) -> str:
    if value is None:
        return NONE
    digits = 4 if abs(value) < 1 else 2
    text = f"${abs(value):,.{digits}f}"
    return ("-" if value < 0 else "+" if signed else "") + text


def pct(value: Any) -> str:
    return NONE if value is None else f"{100 * value:,.0f}%"


def points(value: Any) -> str:
    """A difference of two shares (0..1) in percentage points."""
    return NONE if value is None else f"{100 * value:+,.0f} pt"


FILTERS = {"num": num, "p": p, "usd": usd, "pct": pct}
