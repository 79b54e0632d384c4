"""Who may do what with a job. Every route asks these functions; nothing else decides.

- admin: reads and acts on every job of every team, submits jobs, manages keys.
- member: reads the jobs of its team; submits jobs; acts (cancel, resume, answer) on its own jobs only.
- reviewer: a member that also accepts or rejects its team's flagged attempts (the review queue),
  except those of the jobs it submitted itself.
- viewer: reads the jobs of its team; nothing else.

A job of another team is answered exactly like a job that does not exist (404): a key learns
nothing about other teams, not even which job ids exist. A job of the caller's own team that the
caller may not act on is a 403 that says whose it is and who can act on it.

A custom task is private to the key that created it: a job on it (`"task": "ct_…"`) can be submitted
by that key only; to every other key, admin included, it does not exist (404). So is a suite of PyTorch references
(`su_…`) and its tasks.

With CUDAMASTER_SERVICE__OPEN_READS=true a request without a key reads as a viewer of the team `default`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from sqlalchemy import ColumnElement, true

from .db.models import ADMIN, DEFAULT_TEAM, MEMBER, REVIEWER, VIEWER, ApiKey, CustomTask, Job, StoredPyTorchTask, Suite


@dataclass(frozen=True)
class Caller:
    """The key a request came with (or the anonymous reader when reads are open)."""

    key_id: str | None
    name: str
    role: str
    team: str

    @classmethod
    def of(cls, key: ApiKey) -> Caller:
        return cls(key.id, key.name, key.role, key.team)

    @classmethod
    def anonymous(cls) -> Caller:
        return cls(None, "anonymous (CUDAMASTER_SERVICE__OPEN_READS)", VIEWER, DEFAULT_TEAM)

    @property
    def label(self) -> str:
        return f"key {self.key_id} ({self.role}, team {self.team})" if self.key_id else self.name


class Owned(Protocol):
    """A job or a campaign: it belongs to the key that submitted it and to that key's team."""

    team: str
    api_key_id: str | None


def can_read(caller: Caller, job: Owned) -> bool:
    return caller.role == ADMIN or job.team == caller.team


def can_act(caller: Caller, job: Owned) -> bool:
    """Cancel, resume, answer (a job); cancel, resume (a campaign): its own key, or an admin."""
    if caller.role == ADMIN:
        return True
    return caller.role in (MEMBER, REVIEWER) and caller.key_id is not None and job.api_key_id == caller.key_id


def can_submit(caller: Caller) -> bool:
    return caller.role in (ADMIN, MEMBER, REVIEWER) and caller.key_id is not None


def may_review(caller: Caller) -> bool:
    """Whether the key reviews at all (the review queue's buttons)."""
    return caller.role in (ADMIN, REVIEWER) and caller.key_id is not None


def can_review(caller: Caller, job: Job) -> bool:
    """Accept or reject a flagged attempt of this job: an admin, or a reviewer of the job's team who did not submit it."""
    if caller.role == ADMIN:
        return caller.key_id is not None
    return may_review(caller) and job.team == caller.team and job.api_key_id != caller.key_id


def can_use_custom_task(caller: Caller, task: CustomTask | StoredPyTorchTask | Suite) -> bool:
    """A stored task (a custom task, a PyTorch reference) or a suite of them is its submitting key's."""
    return caller.key_id is not None and task.api_key_id == caller.key_id


def visible_jobs(caller: Caller) -> ColumnElement[bool]:
    """The WHERE clause of the jobs a caller may list."""
    return true() if caller.role == ADMIN else Job.team == caller.team


def is_admin(caller: Caller) -> bool:
    return caller.role == ADMIN
