"""The pages' number formats: the project's one formatting module (app/fmt.py), as Jinja filters. Their twins in
static/dashboard.js (`cmFormat`) write a value the same way when a live update does."""

from __future__ import annotations

from ..fmt import FILTERS, NONE, P_DIGITS, num, p, pct, points, usd

__all__ = ["FILTERS", "NONE", "P_DIGITS", "num", "p", "pct", "points", "usd"]
