"""What the pages call things: an attempt by its number within its job (1, 2, 3 in the job's order: round, debug
step). A job's title (a custom kernel's own name, not its `ct_…` id), a key's and a campaign's names are read by
app/services/dashboard.py (task_titles, key_names, campaigns_of, attempt_numbers)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def numbered(attempts: Iterable[Any]) -> dict[int, int]:
    """Attempt id -> its number in its job, for attempts given in the job's order (Job.attempts)."""
    return {a.id: i for i, a in enumerate(attempts, start=1)}
