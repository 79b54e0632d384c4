"""The campaign report, from the stored data only (jobs, attempts, LLM calls, profiles, events).

`summarize` gives plain numbers (tested against values computed by hand from the stored jobs); the
Markdown and HTML writers only format them, with bench_tasks.report's page helpers.

- success at tau: the share of the group's variants whose job found a correct kernel (tau = 0) and
  whose best kernel's score P is at least tau (tau >= 1); a variant without a job, or whose job
  failed or found no correct kernel, counts as not reaching any tau;
- rounds used: the highest round of the job's attempts; debug steps used: its debugger attempts;
- tokens: input + output tokens of the job's LLM calls (reasoning tokens are part of output);
- bottleneck classes: the baseline's from its `profile` event, the best kernel's from its stored
  profile (or its `profile` event); "unknown" when none was taken (profile mode none, no ncu);
- tokens sent per profile mode: the `profile_tokens` the planner's LLM calls recorded.
"""

from __future__ import annotations

import html
import json
import math
import threading
from collections import Counter, OrderedDict, defaultdict
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Row, case, func, select
from sqlalchemy.orm import Session

from bench_tasks import TaskError, load_task
from bench_tasks.report import Table, html_page, markdown_page
from graph.contract import DEFAULT_PROFILE_MODE

from .. import fmt
from ..bounds import is_pytorch_task_id
from ..db.models import TERMINAL_STATUSES, Attempt, Campaign, CampaignVariant, Job, JobEvent, LlmCall, Profile
from .store import NOT_STARTED

TAUS = (0, 1, 2, 4, 8, 16, 32)
UNKNOWN = "unknown"
NOT_SANITIZED = "not sanitized"
CACHED_SUMMARIES = 32  # settled campaigns' summaries kept in memory, per process


class ReportError(LookupError):
    """A campaign that is not there (or not visible); the message says what to do."""


@dataclass
class VariantLine:
    task: str
    precision: str
    category: str
    job_id: str | None
    status: str
    best_p: float | None
    rounds_used: int
    debug_steps: int
    tokens: int
    cost_usd: float
    flags: list[str]
    baseline_class: str
    best_class: str
    profile_tokens: int
    planner_calls: int
    sanitizer: str = NOT_SANITIZED  # the best kernel's compute-sanitizer standing: clean | not_run | not sanitized

    @property
    def correct(self) -> bool:
        return self.best_p is not None

    def reaches(self, tau: float) -> bool:
        return self.correct and (tau == 0 or (self.best_p or 0.0) >= tau)


@dataclass
class CampaignSummary:
    id: str
    name: str
    status: str
    config: dict[str, Any]
    lines: list[VariantLine]
    per_role: dict[str, dict[str, float]] = field(default_factory=dict)  # role -> calls, tokens, cost_usd
    sanitizer_findings: int = 0  # correct kernels of its jobs that compute-sanitizer found errors in (never a result)

    @property
    def n(self) -> int:
        return len(self.lines)

    def success(self, lines: list[VariantLine] | None = None) -> dict[int, float]:
        group = self.lines if lines is None else lines
        return {tau: (sum(v.reaches(tau) for v in group) / len(group) if group else 0.0) for tau in TAUS}

    def groups(self, key: str) -> dict[str, list[VariantLine]]:
        out: dict[str, list[VariantLine]] = defaultdict(list)
        for v in self.lines:
            out[getattr(v, key)].append(v)
        return dict(sorted(out.items()))

    @property
    def total_cost_usd(self) -> float:
        return sum(v.cost_usd for v in self.lines)

    @property
    def total_tokens(self) -> int:
        return sum(v.tokens for v in self.lines)

    @property
    def transitions(self) -> dict[tuple[str, str], int]:
        """(baseline class, best kernel class) -> variants, over variants with a correct kernel."""
        return dict(Counter((v.baseline_class, v.best_class) for v in self.lines if v.correct))

    @property
    def baseline_classes(self) -> dict[str, int]:
        return dict(Counter(v.baseline_class for v in self.lines))

    @property
    def best_classes(self) -> dict[str, int]:
        return dict(Counter(v.best_class for v in self.lines if v.correct))

    @property
    def profile_tokens(self) -> dict[str, Any]:
        sent = sum(v.profile_tokens for v in self.lines)
        calls = sum(v.planner_calls for v in self.lines)
        return {
            "mode": self.config.get("profile_mode", DEFAULT_PROFILE_MODE),
            "budget": self.config.get("profile_token_budget"),
            "tokens_sent": sent,
            "planner_calls": calls,
            "per_call": sent / calls if calls else 0.0,
            "per_variant": sent / self.n if self.n else 0.0,
        }

    @property
    def sanitizer(self) -> dict[str, int]:
        """The variants with a correct kernel, by their best kernel's compute-sanitizer standing, and the correct kernels
        with findings kept out of the results."""
        counts = Counter(v.sanitizer for v in self.lines if v.correct)
        return {**{k: counts.get(k, 0) for k in ("clean", "not_run", NOT_SANITIZED)}, "kernels_with_findings": self.sanitizer_findings}

    def geomean_p(self) -> float | None:
        ps = [v.best_p for v in self.lines if v.best_p is not None and v.best_p > 0]
        return math.exp(sum(math.log(p) for p in ps) / len(ps)) if ps else None

    def to_dict(self) -> dict[str, Any]:
        """JSON for the API and the dashboard."""
        return {
            "id": self.id,
            "name": self.name,
            "status": self.status,
            "config": self.config,
            "variants": self.n,
            "taus": list(TAUS),
            "success": {
                "overall": self.success(),
                "precision": {k: self.success(g) for k, g in self.groups("precision").items()},
                "category": {k: self.success(g) for k, g in self.groups("category").items()},
            },
            "totals": {
                "cost_usd": self.total_cost_usd,
                "tokens": self.total_tokens,
                "avg_cost_usd": self.total_cost_usd / self.n if self.n else 0.0,
                "avg_tokens": self.total_tokens / self.n if self.n else 0.0,
                "geomean_p": self.geomean_p(),
            },
            "per_role": self.per_role,
            "bottlenecks": {
                "baseline": self.baseline_classes,
                "best": self.best_classes,
                "transitions": [{"baseline": b, "best": k, "variants": n} for (b, k), n in sorted(self.transitions.items())],
            },
            "profile_tokens": self.profile_tokens,
            "sanitizer": self.sanitizer,
            "lines": [dict(vars(v), correct=v.correct) for v in self.lines],
        }


def _category(task: str) -> str:
    try:
        return load_task(task).category
    except TaskError:  # a stored task this process has not registered
        return "pytorch" if is_pytorch_task_id(task) else "custom"


def summarize(session: Session, campaign_id: str) -> CampaignSummary:
    """The campaign's numbers. A settled campaign's summary is kept by revision (see `_settled_revision`), so
    comparing finished campaigns reads one row per variant per request; the summary is computed from only
    the columns it needs, as plain rows (no ORM objects, no job settings, no sources)."""
    campaign = session.get(Campaign, campaign_id)
    if campaign is None:
        raise ReportError(f"no campaign {campaign_id!r}; list them with `cudamaster campaign status` or GET /api/v1/campaigns")
    variants = _variant_rows(session, campaign_id)
    revision = _settled_revision(session, campaign, variants)
    if revision is not None:
        with _settled_lock:
            if revision in _settled:
                _settled.move_to_end(revision)
                return _settled[revision]
    summary = _summarize(session, campaign, variants)
    if revision is not None:
        with _settled_lock:
            _settled[revision] = summary
            while len(_settled) > CACHED_SUMMARIES:
                _settled.popitem(last=False)
    return summary


# Summaries of settled campaigns (every variant's job terminal or not started), by revision: read them, never change them.
_settled: OrderedDict[tuple, CampaignSummary] = OrderedDict()
_settled_lock = threading.Lock()  # pages run in the server's thread pool


def _settled_revision(session: Session, campaign: Campaign, variants: list[Row]) -> tuple | None:
    """What a settled campaign's summary depends on that can still change: the campaign's name, status and
    configuration, and each variant's job (a resumed job leaves its terminal status and bumps updated_at).
    A terminal job's attempts, events, profiles and LLM calls are final, so they need not be read to know the
    summary is current. None while a job is running: its summary is computed afresh each time."""
    if any(v.status is not None and v.status not in TERMINAL_STATUSES for v in variants):
        return None
    return (
        str(session.get_bind().engine.url),
        campaign.id,
        campaign.name,
        campaign.status,
        campaign.updated_at,
        json.dumps(campaign.config, sort_keys=True, default=str),
        tuple(tuple(v) for v in variants),
    )


def _summarize(session: Session, campaign: Campaign, variants: list[Row]) -> CampaignSummary:
    facts = _JobFacts()
    job_ids = [v.job_id for v in variants if v.job_id]
    if job_ids:
        facts.rounds = _rounds_used(session, job_ids)
        best_ids = [v.best_attempt_id for v in variants if v.best_attempt_id is not None]
        if best_ids:
            facts.best_attempts, facts.best_profiles = _best_attempts(session, best_ids)
        facts.read_events(_job_events(session, job_ids))
        facts.per_role = _per_role(session, job_ids, len(variants))
        facts.sanitizer_findings = _sanitizer_findings(session, job_ids)
    lines = [_variant_line(v, facts) for v in variants]
    return CampaignSummary(
        campaign.id, campaign.name, campaign.status, dict(campaign.config), lines, facts.per_role, facts.sanitizer_findings
    )


def _sanitizer_findings(session: Session, job_ids: list[str]) -> int:
    """The jobs' correct kernels with compute-sanitizer findings."""
    return int(
        session.scalar(select(func.count(Attempt.id)).where(Attempt.job_id.in_(job_ids), Attempt.sanitizer_status == "findings")) or 0
    )


@dataclass
class _JobFacts:
    """What the summary reads of the variants' jobs besides their own rows: their attempts, best kernels'
    profiles, `profile` and `llm_call` events, and LLM calls per role."""

    rounds: dict[str, tuple[int, int]] = field(default_factory=dict)  # job -> (rounds used, debug steps used)
    best_attempts: dict[int, Row] = field(default_factory=dict)  # attempt id -> its job, key and evaluation
    best_profiles: dict[int, str] = field(default_factory=dict)  # attempt id -> its stored profile's class
    per_role: dict[str, dict[str, float]] = field(default_factory=dict)
    baseline_class: dict[str, str] = field(default_factory=dict)  # job -> its baseline's class
    event_class: dict[tuple[str, str], str] = field(default_factory=dict)  # (job, attempt key) -> class
    profile_tokens: Counter = field(default_factory=Counter)  # job -> profile tokens its planner calls sent
    planner_calls: Counter = field(default_factory=Counter)  # job -> its planner calls
    sanitizer_findings: int = 0

    def read_events(self, events: list[Row]) -> None:
        """Bottleneck classes from `profile` events (the first for each baseline or attempt); profile tokens
        and calls from the planner's `llm_call` events."""
        for e in events:
            p = e.payload or {}
            if e.type == "profile":
                if p.get("of") == "baseline" and p.get("bottleneck_class"):
                    self.baseline_class.setdefault(e.job_id, p["bottleneck_class"])
                elif p.get("attempt_id") and p.get("bottleneck_class"):
                    self.event_class.setdefault((e.job_id, str(p["attempt_id"])), p["bottleneck_class"])
            elif p.get("role") == "planner":
                self.profile_tokens[e.job_id] += int(p.get("profile_tokens") or 0)
                self.planner_calls[e.job_id] += 1

    def best_class(self, best: Row | None) -> str:
        """The best kernel's bottleneck class: its stored profile's, else its `profile` event's."""
        if best is None:
            return UNKNOWN
        return self.best_profiles.get(best.id) or self.event_class.get((best.job_id, best.attempt_key)) or UNKNOWN


def _rounds_used(session: Session, job_ids: list[str]) -> dict[str, tuple[int, int]]:
    """Each job's highest attempt round and its number of debugger attempts."""
    rounds: dict[str, tuple[int, int]] = {}
    for job_id, max_round, debug in session.execute(
        select(Attempt.job_id, func.max(Attempt.round), func.sum(case((Attempt.debug_step > 0, 1), else_=0)))
        .where(Attempt.job_id.in_(job_ids))
        .group_by(Attempt.job_id)
    ):
        rounds[job_id] = (int(max_round or 0), int(debug or 0))
    return rounds


def _best_attempts(session: Session, best_ids: list[int]) -> tuple[dict[int, Row], dict[int, str]]:
    """The best attempts (id, job, key, evaluation) by id, and the bottleneck classes of those with a stored profile."""
    best_attempts = {
        a.id: a
        for a in session.execute(
            select(Attempt.id, Attempt.job_id, Attempt.attempt_key, Attempt.evaluation, Attempt.sanitizer_status).where(
                Attempt.id.in_(best_ids)
            )
        )
    }
    best_profiles = dict(
        session.execute(select(Profile.attempt_id, Profile.bottleneck_class).where(Profile.attempt_id.in_(best_ids))).all()
    )
    return best_attempts, best_profiles


def _job_events(session: Session, job_ids: list[str]) -> list[Row]:
    """The jobs' `profile` and `llm_call` events, oldest first."""
    return list(
        session.execute(
            select(JobEvent.job_id, JobEvent.type, JobEvent.payload)
            .where(JobEvent.job_id.in_(job_ids), JobEvent.type.in_(("profile", "llm_call")))
            .order_by(JobEvent.id)
        )
    )


def _per_role(session: Session, job_ids: list[str], variants: int) -> dict[str, dict[str, float]]:
    """LLM calls, tokens and cost per role over the jobs, and their averages over the campaign's variants."""
    per_role: dict[str, dict[str, float]] = {}
    for role, calls, tokens, cost in session.execute(
        select(
            LlmCall.role,
            func.count(LlmCall.id),
            func.coalesce(func.sum(LlmCall.input_tokens + LlmCall.output_tokens), 0),
            func.coalesce(func.sum(LlmCall.cost_usd), 0.0),
        )
        .where(LlmCall.job_id.in_(job_ids))
        .group_by(LlmCall.role)
    ):
        per_role[role] = {
            "calls": int(calls),
            "tokens": int(tokens),
            "cost_usd": float(cost),
            "avg_tokens": int(tokens) / variants,
            "avg_cost_usd": float(cost) / variants,
        }
    return per_role


def _variant_line(v: Row, facts: _JobFacts) -> VariantLine:
    """One variant's line: its job's totals where it has a job (else not started, nothing spent)."""
    started = v.status is not None  # the variant has a job
    best = facts.best_attempts.get(v.best_attempt_id) if v.best_attempt_id is not None else None
    flags = sorted({f for row in ((best.evaluation or {}).get("rows") or []) for f in row.get("flags") or []}) if best else []
    r, d = facts.rounds.get(v.job_id or "", (0, 0))
    return VariantLine(
        task=v.task,
        precision=v.precision,
        category=_category(v.task),
        job_id=v.job_id,
        status=v.status if started else NOT_STARTED,
        best_p=v.best_score if started else None,
        rounds_used=r,
        debug_steps=d,
        tokens=int((v.input_tokens or 0) + (v.output_tokens or 0)) if started else 0,
        cost_usd=float(v.cost_usd or 0.0) if started else 0.0,
        flags=flags,
        baseline_class=facts.baseline_class.get(v.job_id or "", UNKNOWN),
        best_class=facts.best_class(best),
        profile_tokens=facts.profile_tokens[v.job_id],
        planner_calls=facts.planner_calls[v.job_id],
        sanitizer=(best.sanitizer_status or NOT_SANITIZED) if best else NOT_SANITIZED,
    )


def _variant_rows(session: Session, campaign_id: str) -> list[Row]:
    """The campaign's variants in order, each with its job's status, best score and totals (None without a job)."""
    return list(
        session.execute(
            select(
                CampaignVariant.task,
                CampaignVariant.precision,
                CampaignVariant.job_id,
                Job.status,
                Job.best_score,
                Job.best_attempt_id,
                Job.input_tokens,
                Job.output_tokens,
                Job.cost_usd,
                Job.updated_at,
            )
            .outerjoin(Job, Job.id == CampaignVariant.job_id)
            .where(CampaignVariant.campaign_id == campaign_id)
            .order_by(CampaignVariant.position)
        )
    )


# -- writing -----------------------------------------------------------------------------------------
# Every number through app/fmt.py, as the dashboard writes it: 6,450 tokens, $0.0720, P 1.234, 50%.
_pct, _p, _usd, _num = fmt.pct, fmt.p, fmt.usd, fmt.num
FLAG_CHOICE = {None: "the service's default", True: "chosen by the compiler role", False: "fixed"}


def _label(s: CampaignSummary) -> str:
    return f"{s.name or s.id} ({s.id})" if s.name else s.id


def _config_line(s: CampaignSummary) -> str:
    c = s.config
    models = ", ".join(f"{k}={v}" for k, v in sorted((c.get("models") or {}).items())) or "service defaults"
    budget = c.get("profile_token_budget")
    return (
        f"R={c.get('rounds')}, D={c.get('debug')}, profile {c.get('profile_mode')}"
        + (f" (budget {budget} tokens)" if budget else "")
        + f", sizes {c.get('sizes')}, models {models}, "
        f"nvcc flags {FLAG_CHOICE.get(c.get('choose_flags'), str(c.get('choose_flags')))}"
    )


def _tables(s: CampaignSummary, prefix: str) -> list[Table]:
    return [
        _success_table(s, prefix),
        _variant_table(s, prefix),
        _cost_table(s, prefix),
        _class_table(s, prefix),
        _transition_table(s, prefix),
        _profile_token_table(s, prefix),
        _sanitizer_table(s, prefix),
    ]


def _sanitizer_table(s: CampaignSummary, prefix: str) -> Table:
    counts = s.sanitizer
    head = ["clean", "not run (GPU or tool)", "not sanitized", "correct kernels with findings (kept out)"]
    row = [str(counts["clean"]), str(counts["not_run"]), str(counts[NOT_SANITIZED]), str(counts["kernels_with_findings"])]
    return (f"{prefix}compute-sanitizer: variants by their best kernel's verdict", head, [row])


def _success_table(s: CampaignSummary, prefix: str) -> Table:
    head = ["group", "variants"] + [("correct" if t == 0 else f"P ≥ {t}") for t in TAUS]
    success = [["overall", _num(s.n), *(_pct(x) for x in s.success().values())]]
    for key in ("precision", "category"):
        for name, group in s.groups(key).items():
            success.append([f"{key} {name}", _num(len(group)), *(_pct(x) for x in s.success(group).values())])
    return (f"{prefix}Success at tau (share of variants)", head, success)


def _variant_table(s: CampaignSummary, prefix: str) -> Table:
    head = [
        "variant",
        "category",
        "status",
        "best P",
        "rounds",
        "debug steps",
        "tokens",
        "cost",
        "verdict flags",
        "baseline class",
        "best class",
        "",
    ]
    variants = [
        [
            f"{v.task}/{v.precision}",
            v.category,
            v.status,
            _p(v.best_p),
            _num(v.rounds_used),
            _num(v.debug_steps),
            _num(v.tokens),
            _usd(v.cost_usd),
            ", ".join(v.flags) or "–",
            v.baseline_class,
            v.best_class,
            "FAILED" if v.status == "failed" else "",
        ]
        for v in s.lines
    ]
    return (f"{prefix}Per variant", head, variants)


def _cost_table(s: CampaignSummary, prefix: str) -> Table:
    n = s.n or 1
    costs = [["all roles", _num(s.total_tokens), _usd(s.total_cost_usd), _num(s.total_tokens / n, 1), _usd(s.total_cost_usd / n)]]
    costs += [
        [role, _num(int(r["tokens"])), _usd(r["cost_usd"]), _num(r["avg_tokens"], 1), _usd(r["avg_cost_usd"])]
        for role, r in sorted(s.per_role.items())
    ]
    return (f"{prefix}Cost and tokens (total and per variant)", ["role", "tokens", "cost", "tokens / variant", "cost / variant"], costs)


def _class_table(s: CampaignSummary, prefix: str) -> Table:
    counts = sorted(set(s.baseline_classes) | set(s.best_classes))
    totals = [[c, _num(s.baseline_classes.get(c, 0)), _num(s.best_classes.get(c, 0))] for c in counts]
    return (
        f"{prefix}Bottleneck classes: baselines (all variants) and best kernels (correct ones)",
        ["class", "baselines", "best kernels"],
        totals,
    )


def _transition_table(s: CampaignSummary, prefix: str) -> Table:
    classes = sorted({c for pair in s.transitions for c in pair})
    moves = [
        [b, *(_num(s.transitions.get((b, k), 0)) for k in classes), _num(sum(s.transitions.get((b, k), 0) for k in classes))]
        for b in classes
    ]
    return (
        f"{prefix}Bottleneck transitions: baseline class (row) -> best kernel class (column), variants with a correct kernel",
        ["baseline \\ best", *classes, "total"],
        moves,
    )


def _profile_token_table(s: CampaignSummary, prefix: str) -> Table:
    pt = s.profile_tokens
    return (
        f"{prefix}Profile tokens sent to the planner",
        ["mode", "budget", "tokens sent", "planner calls", "per call", "per variant"],
        [
            [
                pt["mode"],
                _num(pt["budget"]) if pt["budget"] else "whole",
                _num(pt["tokens_sent"]),
                _num(pt["planner_calls"]),
                _num(pt["per_call"], 1),
                _num(pt["per_variant"], 1),
            ]
        ],
    )


def ablation_table(summaries: list[CampaignSummary]) -> Table:
    """The campaigns side by side; each later one with its difference from the first."""
    head = (
        ["campaign", "configuration", "variants"]
        + [("correct" if t == 0 else f"P ≥ {t}") for t in TAUS]
        + ["geomean P", "cost / variant", "tokens / variant", "profile tokens / planner call"]
    )
    first = summaries[0]
    rows = []
    for s in summaries:
        pt = s.profile_tokens
        rows.append(
            [
                _label(s),
                _config_line(s),
                _num(s.n),
                *(_pct(x) for x in s.success().values()),
                _p(s.geomean_p()),
                _usd(s.total_cost_usd / (s.n or 1)),
                _num(s.total_tokens / (s.n or 1), 1),
                _num(pt["per_call"], 1),
            ]
        )
        if s is not first:
            d = [b - a for a, b in zip(first.success().values(), s.success().values(), strict=True)]
            g1, g2 = first.geomean_p(), s.geomean_p()
            rows.append(
                [
                    f"  difference from {first.id}",
                    "",
                    _num(s.n - first.n, signed=True),
                    *(fmt.points(x) for x in d),
                    _p(g2 - g1, signed=True) if g1 is not None and g2 is not None else "–",
                    _usd(s.total_cost_usd / (s.n or 1) - first.total_cost_usd / (first.n or 1), signed=True),
                    _num(s.total_tokens / (s.n or 1) - first.total_tokens / (first.n or 1), 1, signed=True),
                    _num(pt["per_call"] - first.profile_tokens["per_call"], 1, signed=True),
                ]
            )
    return ("Campaigns side by side (ablation)", head, rows)


def all_tables(summaries: list[CampaignSummary]) -> list[Table]:
    tables: list[Table] = [ablation_table(summaries)] if len(summaries) > 1 else []
    for s in summaries:
        tables += _tables(s, f"{s.id}: " if len(summaries) > 1 else "")
    return tables


def _intro(summaries: list[CampaignSummary]) -> list[str]:
    return [f"Campaign {_label(s)}: {s.status}, {s.n} variants; {_config_line(s)}" for s in summaries] + [
        "Success at tau: share of variants with a correct kernel (tau 0) whose best P is at least tau; a variant "
        "without a correct kernel counts as below every tau."
    ]


def _svg_success(summaries: list[CampaignSummary]) -> str:
    """Cumulative success (overall) against tau, one line per campaign, inline SVG."""
    colors = ("#2f6fde", "#d9822b", "#2e9e5b", "#a23bc4", "#7a7f87")
    w, h, left, top = 520, 220, 40, 14
    step = (w - left - 20) / (len(TAUS) - 1)
    parts = [
        f'<svg width="{w}" height="{h + 60}" role="img" aria-label="share of variants reaching each tau">',
        f'<line x1="{left}" y1="{top + h - 20}" x2="{w - 10}" y2="{top + h - 20}" stroke="#999"/>',
    ]
    for i, t in enumerate(TAUS):
        parts.append(
            f'<text x="{left + i * step:.1f}" y="{top + h}" text-anchor="middle" font-size="11">{"correct" if t == 0 else f"≥{t}"}</text>'
        )
    for j, s in enumerate(summaries):
        c = colors[j % len(colors)]
        pts = [(left + i * step, top + (h - 20) * (1 - x)) for i, x in enumerate(s.success().values())]
        parts.append(f'<polyline fill="none" stroke="{c}" stroke-width="2" points="' + " ".join(f"{x:.1f},{y:.1f}" for x, y in pts) + '"/>')
        parts += [
            f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{c}"><title>{html.escape(s.id)}: {_pct(v)}</title></circle>'
            for (x, y), v in zip(pts, s.success().values(), strict=True)
        ]
        parts.append(
            f'<rect x="{left + j * 160}" y="{top + h + 18}" width="10" height="10" fill="{c}"/>'
            f'<text x="{left + 14 + j * 160}" y="{top + h + 27}" font-size="11">{html.escape(s.id)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def to_markdown(summaries: list[CampaignSummary]) -> str:
    return markdown_page("Campaign report", _intro(summaries), all_tables(summaries))


def to_html(summaries: list[CampaignSummary]) -> str:
    return html_page("Campaign report", [html.escape(line) for line in _intro(summaries)], [_svg_success(summaries)], all_tables(summaries))
