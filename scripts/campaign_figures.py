"""The figures of a campaign run by scripts/campaign_h200.py, computed from what its --out DIR keeps:

- service.db: the campaign, its jobs (wall time, LLM time) and their events;
- evaluator_seconds.json: per variant, the seconds TimedEvaluator measured: compile, evaluate, profile, and
  two waits for the GPU: GPU_TURN_WAIT (inside an evaluate/profile call: LocalEvaluator's file lock, so
  already counted in that call's seconds) and POOL_WAIT (before the call: the service's GPU pool, outside it;
  runs before the pool reported its waits have none);
- sittings.json: the start and end of each sitting (--stop-after / --resume).

Two overhead figures, per job that ran in one sitting:

1. overhead = wall - evaluation - GPU waits (both) - LLM time, from the evaluator's own timing;
2. service time between evaluator calls, from the job events alone (see `between_evaluator_calls_s`).

`write_figures` writes figures.json, report.md/html/json and the two SVGs; the run and --figures-only share it.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

GPU_TURN_WAIT = "gpu_wait"  # reported inside an evaluate/profile call (counted in its seconds)
POOL_WAIT = "pool_wait"  # reported before the call, by the service's GPU pool (not in its seconds)
WAITS = (GPU_TURN_WAIT, POOL_WAIT)

# The graph nodes that call the evaluator (graph/nodes: baseline evaluates and profiles the baseline, compile
# compiles, verify evaluates, profile profiles); every other node is the agent's own work or an LLM call.
EVALUATOR_NODES = frozenset({"baseline", "compile", "verify", "profile"})

EVENTS_NOTE = (
    "service time between evaluator calls, from the job events only: each node event is stored when its node "
    "finishes, so a node spans (previous node event, or the job's start for the first, -> its event]; per job: "
    "the spans of the nodes that do not call the evaluator (all but " + ", ".join(sorted(EVALUATOR_NODES)) + ") "
    "- the job's LLM time + (job finished - last node event). Graph start-up before the baseline node falls "
    "inside the baseline node's span and is therefore not counted; nor is other service work inside an evaluator "
    "node's span (e.g. storing that node's attempt event, which comes before its node event). "
    "% of the job's evaluate + compile seconds "
    "(evaluator_seconds.json). Jobs that ran in one sitting only."
)


def between_evaluator_calls_s(started_at: datetime, finished_at: datetime, nodes: Iterable[tuple[str, datetime]], llm_s: float) -> float:
    """The job's time outside the evaluator and the LLM, from its node events (node, time stored) in order."""
    previous, outside = started_at, 0.0
    for node, at in nodes:
        if node not in EVALUATOR_NODES:
            outside += (at - previous).total_seconds()
        previous = at
    return outside - llm_s + (finished_at - previous).total_seconds()


def _median_max(values: list[float]) -> dict[str, float | None]:
    ordered = sorted(values)
    return {"median": ordered[len(ordered) // 2] if ordered else None, "max": ordered[-1] if ordered else None}


def _svg_bars(title: str, labels: list[str], values: list[float], unit: str, target: float | None, target_label: str) -> str:
    w, bar, top, h = max(480, 14 * len(values) + 80), 10, 30, 220
    peak = max([*values, target or 0.0, 1e-9])
    esc = html.escape
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h + 90}">',
        f'<text x="10" y="18" font-size="13">{esc(title)}</text>',
    ]
    for i, (label, v) in enumerate(zip(labels, values, strict=True)):
        bh = h * v / peak
        x = 50 + i * (bar + 4)
        parts.append(
            f'<rect x="{x}" y="{top + h - bh:.1f}" width="{bar}" height="{bh:.1f}" fill="#2f6fde">'
            f"<title>{esc(label)}: {v:.4g} {esc(unit)}</title></rect>"
        )
    if target is not None:
        y = top + h - h * target / peak
        parts.append(
            f'<line x1="45" x2="{w - 10}" y1="{y:.1f}" y2="{y:.1f}" stroke="#d9822b" stroke-dasharray="4 3"/>'
            f'<text x="{w - 10}" y="{y - 4:.1f}" font-size="11" text-anchor="end">{esc(target_label)}</text>'
        )
    parts.append(f'<text x="10" y="{top + h + 20}" font-size="11">{len(values)} bars; max {peak:.4g} {esc(unit)}</text></svg>')
    return "".join(parts)


def _job_row(
    v: Any, job: Any, spent: dict[str, float], sittings: list[dict[str, float]], nodes: list[tuple[str, datetime]]
) -> dict[str, Any]:
    parts = {k: s for k, s in spent.items() if k not in WAITS}
    turn_wait_s, pool_wait_s = spent.get(GPU_TURN_WAIT, 0.0), spent.get(POOL_WAIT, 0.0)
    evaluation_s = sum(parts.values()) - turn_wait_s  # the file lock's wait lies inside evaluate/profile
    gpu_wait_s = turn_wait_s + pool_wait_s
    wall_s = (job.finished_at - job.started_at).total_seconds() if job.finished_at and job.started_at else None
    one_sitting = wall_s is not None and any(
        s["start"] <= job.started_at.timestamp() and job.finished_at.timestamp() <= s["end"] for s in sittings
    )
    overhead = wall_s - evaluation_s - gpu_wait_s - job.llm_latency_s if wall_s is not None and one_sitting else None
    evaluate_compile_s = parts.get("evaluate", 0.0) + parts.get("compile", 0.0)
    between = between_evaluator_calls_s(job.started_at, job.finished_at, nodes, job.llm_latency_s) if one_sitting else None
    return {
        "variant": f"{v.task}/{v.precision}",
        "status": job.status,
        "best_p": job.best_score,
        "wall_s": wall_s,
        "evaluation_s": evaluation_s,
        "evaluation_parts_s": parts,
        "gpu_wait_s": gpu_wait_s,
        "gpu_pool_wait_s": pool_wait_s,
        "llm_s": job.llm_latency_s,
        "overhead_s": overhead,
        "overhead_pct_of_evaluation": 100 * overhead / evaluation_s if overhead is not None and evaluation_s else None,
        "evaluate_and_compile_s": evaluate_compile_s,
        "between_evaluator_calls_s": between,
        "between_evaluator_calls_pct_of_evaluation": 100 * between / evaluate_compile_s
        if between is not None and evaluate_compile_s
        else None,
        "one_sitting": one_sitting,
        "message": job.message[:300],
    }


def _node_events(session: Any, job_id: str) -> list[tuple[str, datetime]]:
    from sqlalchemy import select

    from app.db.models import JobEvent

    rows = session.scalars(select(JobEvent).where(JobEvent.job_id == job_id, JobEvent.type == "node").order_by(JobEvent.id))
    return [(str(e.payload.get("node", "")), e.created_at) for e in rows]


def write_figures(out: Path, head: dict[str, Any], campaign_id: str | None = None) -> dict[str, Any]:
    """Compute the figures from DIR's files, write them (figures.json starts with `head`: provenance, GPU) and
    the campaign report and SVGs; `campaign_id`: default the latest campaign in service.db."""
    from sqlalchemy import select

    from app.campaigns import report as campaign_report
    from app.db.engine import make_engine, make_sessionmaker
    from app.db.models import Campaign, Job

    seconds_file, sittings_file = out / "evaluator_seconds.json", out / "sittings.json"
    seconds: dict[str, dict[str, float]] = json.loads(seconds_file.read_text()) if seconds_file.exists() else {}
    sittings: list[dict[str, float]] = json.loads(sittings_file.read_text()) if sittings_file.exists() else []
    engine = make_engine(f"sqlite:///{out / 'service.db'}")
    try:
        with make_sessionmaker(engine)() as session:
            if campaign_id is None:
                campaign_id = session.scalar(select(Campaign.id).order_by(Campaign.created_at.desc()).limit(1))
                if campaign_id is None:
                    raise SystemExit(f"no campaign in {out / 'service.db'}")
            summary = campaign_report.summarize(session, campaign_id)
            campaign = session.get(Campaign, campaign_id)
            assert campaign is not None  # summarize found it
            rows = []
            for v in campaign.variants:
                job = session.get(Job, v.job_id) if v.job_id else None
                if job is not None:
                    spent = seconds.get(f"{v.task}/{v.precision}", {})
                    rows.append(_job_row(v, job, spent, sittings, _node_events(session, job.id)))
            if len(sittings) > 1:
                suite_wall = sum(s["end"] - s["start"] for s in sittings)
            else:
                suite_wall = (campaign.finished_at - campaign.created_at).total_seconds() if campaign.finished_at else None
            max_in_flight = campaign.max_in_flight
    finally:
        engine.dispose()
    sum_eval = sum(r["evaluation_s"] for r in rows)
    overheads = [r["overhead_pct_of_evaluation"] for r in rows if r["overhead_pct_of_evaluation"] is not None]
    between = [r["between_evaluator_calls_pct_of_evaluation"] for r in rows if r["between_evaluator_calls_pct_of_evaluation"] is not None]
    figures = {
        **head,
        "campaign": campaign_id,
        "status": summary.status,
        "variants": summary.n,
        "correct": sum(v.correct for v in summary.lines),
        "scripted_model": "coder answers the baseline source renamed to the optimized entry point (known correct, not optimized)",
        "jobs": rows,
        "overhead_pct_of_evaluation": {
            **_median_max(overheads),
            "target_pct": 1.0,
            "note": "wall - evaluation - GPU waits (the service's GPU pool and the GPU's file lock) - LLM time; "
            "runs before the pool's wait was measured count that queueing as overhead",
        },
        "between_evaluator_calls_pct_of_evaluation": {
            **_median_max(between),
            "jobs": len(between),
            "target_pct": 1.0,
            "note": EVENTS_NOTE,
        },
        "suite": {
            "wall_s": suite_wall,
            "sum_of_evaluations_s": sum_eval,
            "wall_over_sum_pct": 100 * (suite_wall / sum_eval - 1) if suite_wall and sum_eval else None,
            "target_pct": 10.0,
            "max_in_flight": max_in_flight,
            "sittings": len(sittings),
            "note": "wall time: the sum of the sittings' times (service start-up included)"
            if len(sittings) > 1
            else "wall time: campaign created -> finished",
        },
    }
    (out / "figures.json").write_text(json.dumps(figures, indent=1, default=str))
    (out / "report.md").write_text(campaign_report.to_markdown([summary]))
    (out / "report.html").write_text(campaign_report.to_html([summary]))
    (out / "report.json").write_text(json.dumps({"campaigns": [summary.to_dict()]}, indent=1, default=str))
    ordered = sorted((r for r in rows if r["overhead_pct_of_evaluation"] is not None), key=lambda r: r["overhead_pct_of_evaluation"])
    (out / "overhead.svg").write_text(
        _svg_bars(
            "Service overhead per job, % of its evaluation time",
            [r["variant"] for r in ordered],
            [r["overhead_pct_of_evaluation"] for r in ordered],
            "%",
            1.0,
            "target 1 %",
        )
    )
    (out / "suite_wall.svg").write_text(
        _svg_bars(
            "Whole-suite wall time vs the sum of its evaluation times",
            ["sum of evaluations", "campaign wall time"],
            [sum_eval, suite_wall or 0.0],
            "s",
            1.1 * sum_eval,
            "sum + 10 %",
        )
    )
    return figures
