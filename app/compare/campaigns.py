"""Campaigns side by side (the ablation of profile modes: none / full / filtered): success at each tau,
cost, token use per profile mode and bottleneck transitions, from app/campaigns/report.py's numbers."""

from __future__ import annotations

from collections import defaultdict

from sqlalchemy.orm import Session

from ..campaigns import report
from .schemas import CampaignComparison, ComparedCampaign, ModeUse, ProfileTokens, TransitionRow


def compare_campaigns(session: Session, campaign_ids: list[str]) -> CampaignComparison:
    """The campaigns `campaign_ids` (read by the caller: app/services/compare.py checks it), in that order."""
    summaries = [report.summarize(session, cid) for cid in campaign_ids]
    variant_sets = [{(v.task, v.precision) for v in s.lines} for s in summaries]
    return CampaignComparison(
        taus=list(report.TAUS),
        campaigns=[_column(s) for s in summaries],
        transitions=_transitions(summaries),
        by_profile_mode=_by_mode(summaries),
        common_variants=len(set.intersection(*variant_sets)),
    )


def _column(s: report.CampaignSummary) -> ComparedCampaign:
    n = s.n or 1
    pt = s.profile_tokens
    return ComparedCampaign(
        id=s.id,
        name=s.name,
        status=s.status,
        configuration=report._config_line(s),
        variants=s.n,
        correct=sum(v.correct for v in s.lines),
        success=list(s.success().values()),
        geomean_p=s.geomean_p(),
        cost_usd=s.total_cost_usd,
        tokens=s.total_tokens,
        cost_per_variant=s.total_cost_usd / n,
        tokens_per_variant=s.total_tokens / n,
        profile_tokens=ProfileTokens(**pt),
    )


def _transitions(summaries: list[report.CampaignSummary]) -> list[TransitionRow]:
    pairs = sorted({pair for s in summaries for pair in s.transitions})
    return [TransitionRow(baseline=b, best=k, variants=[s.transitions.get((b, k), 0) for s in summaries]) for b, k in pairs]


def _by_mode(summaries: list[report.CampaignSummary]) -> list[ModeUse]:
    groups: dict[str, list[report.CampaignSummary]] = defaultdict(list)
    for s in summaries:
        groups[str(s.profile_tokens["mode"])].append(s)
    out = []
    for mode, group in sorted(groups.items()):
        n = sum(s.n for s in group)
        calls = sum(s.profile_tokens["planner_calls"] for s in group)
        out.append(
            ModeUse(
                mode=mode,
                campaigns=[s.id for s in group],
                variants=n,
                tokens_per_variant=sum(s.total_tokens for s in group) / (n or 1),
                cost_per_variant=sum(s.total_cost_usd for s in group) / (n or 1),
                profile_tokens_per_planner_call=sum(s.profile_tokens["tokens_sent"] for s in group) / calls if calls else 0.0,
                correct_share=sum(v.correct for s in group for v in s.lines) / (n or 1),
            )
        )
    return out
