"""One number format for every page: the Jinja filters here and their twins in static/dashboard.js
(`cmFormat`) write a value the same way, whether the server renders it or a live update does.

- `num`: thousands separators; an int as is, a float with 2 decimals (or `digits`).
- `p`: a score P (weighted speedup), always 3 decimals.
- `usd`: dollars with `$`, 4 decimals under $1, else 2.
- `pct`: a share (0..1) as a whole percent.
None is "–" everywhere.
"""

from __future__ import annotations

from typing import Any

NONE = "–"
P_DIGITS = 3


def num(value: Any, digits: int = 2) -> str:
    if value is None:
        return NONE
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:,.{digits}f}"


def p(value: Any) -> str:
    return num(None if value is None else float(value), P_DIGITS)


def usd(value: Any) -> str:
    return NONE if value is None else f"${value:,.4f}" if value < 1 else f"${value:,.2f}"


def pct(value: Any) -> str:
    return NONE if value is None else f"{100 * value:,.0f}%"


FILTERS = {"num": num, "p": p, "usd": usd, "pct": pct}
