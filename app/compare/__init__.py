"""Runs compared side by side: jobs (each by its best attempt) or attempts of one task and precision,
and campaigns (the ablation of profile modes: their tau-tables, costs, token use and bottleneck
transitions in one table).

The comparisons are built here from runs the caller may read; app/services/compare.py is the way in (it reads
the jobs and campaigns by the jobs' and campaigns' own rules, and turns these errors into the service's), for the
API's routes (app/api/compare.py) and the dashboard's pages (app/web/compare_pages.py) alike: a run the key may
not read is answered exactly like a missing one.
"""

from __future__ import annotations

MIN_COMPARED, MAX_COMPARED = 2, 8


class CompareInvalid(ValueError):
    """The ids cannot be compared (too few, too many, malformed, mixed tasks or precisions): the message says what to pick."""


class CompareNotFound(LookupError):
    """An id names nothing this key may read (another team's run is answered like a missing one)."""


def split_ids(values: list[str] | str, what: str) -> list[str]:
    """Ids given comma-separated and/or repeated, in order, without repeats; 2 to MAX_COMPARED of them."""
    raw = [values] if isinstance(values, str) else values
    ids = list(dict.fromkeys(part.strip() for value in raw for part in value.split(",") if part.strip()))
    if len(ids) < MIN_COMPARED:
        raise CompareInvalid(f"pick at least {MIN_COMPARED} different {what} to compare (ids=ID1,ID2,…); got {len(ids)}")
    if len(ids) > MAX_COMPARED:
        raise CompareInvalid(f"{len(ids)} {what} picked: compare at most {MAX_COMPARED} at a time")
    return ids
