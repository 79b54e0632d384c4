"""Runs compared side by side, for the API's routes (GET /api/v1/compare/*) and the dashboard's pages (/compare/*)
alike: jobs or attempts of one task and precision, and campaigns (app/compare builds the comparisons).

Reads follow the jobs' and campaigns' own rules (access.readable_job, campaigns.readable_campaign): a run of another
team is answered like a missing one (NotFound); too few or too many ids, or runs of different tasks or precisions,
are Invalid (the query's `ids`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from sqlalchemy.orm import Session

from ..compare import MAX_COMPARED as MAX_COMPARED
from ..compare import CompareInvalid, CompareNotFound, split_ids
from ..compare.campaigns import compare_campaigns
from ..compare.runs import compare_attempts, compare_jobs
from ..compare.runs import source_diff as source_diff  # the job page's diff of an attempt from the one before
from ..compare.schemas import CampaignComparison, RunComparison
from ..permissions import Caller
from .access import readable_job
from .campaigns import readable_campaign
from .errors import Invalid, NotFound

T = TypeVar("T")
Ids = list[str] | str  # comma-separated and/or repeated (split_ids)


def _refused_as_service(ids: Ids, compare: Callable[[], T]) -> T:
    """The comparison; app/compare's refusals as the service's (Invalid names the query's `ids`)."""
    try:
        return compare()
    except CompareNotFound as exc:
        raise NotFound(str(exc)) from None
    except CompareInvalid as exc:
        raise Invalid(("query", "ids"), str(exc), ids) from None


def jobs(session: Session, caller: Caller, ids: Ids) -> RunComparison:
    """Jobs of one task and precision, each by its best attempt (else its latest), in the order given."""

    def compare() -> RunComparison:
        return compare_jobs(session, [readable_job(session, caller, job_id) for job_id in split_ids(ids, "jobs")])

    return _refused_as_service(ids, compare)


def attempts(session: Session, caller: Caller, ids: Ids) -> RunComparison:
    """Attempts of one or several jobs of the same task and precision (ids as a job's page lists them)."""
    return _refused_as_service(ids, lambda: compare_attempts(session, caller, split_ids(ids, "attempts")))


def campaigns(session: Session, caller: Caller, ids: Ids) -> CampaignComparison:
    """Campaigns side by side (the ablation of profile modes), in the order given."""

    def compare() -> CampaignComparison:
        campaign_ids = split_ids(ids, "campaigns")
        for campaign_id in campaign_ids:
            readable_campaign(session, caller, campaign_id)
        return compare_campaigns(session, campaign_ids)

    return _refused_as_service(ids, compare)
