"""Prompts: the templates in graph/prompts/*.md filled with the job's facts (string.Template)."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from string import Template
from typing import Any

from bench_tasks.spec import Variant

from .deps import Deps
from .kernel_text import FLAG_ALLOWLIST_TEXT

PROMPTS = Path(__file__).parent / "prompts"


@cache
def template(name: str) -> Template:
    return Template((PROMPTS / f"{name}.md").read_text())


def render(name: str, **values: Any) -> str:
    return template(name).substitute({k: "" if v is None else v for k, v in values.items()})


def arguments_text(variant: Variant) -> str:
    """How the harness passes and prepares the buffers of one variant (memory and output roles)."""
    task, precision = variant.task, variant.precision
    buffers = [a for a in task.args if not a.scalar]
    host = [a.name for a in buffers if a.memory_for(precision) == "host"]
    lines = [
        "Every pointer is a device pointer."
        if not host
        else f"{', '.join(host)} {'is a host pointer' if len(host) == 1 else 'are host pointers'} (pageable host memory; "
        "any allocation and copy your entry point does is timed); every other pointer is a device pointer."
    ]
    before = {
        "output": "poisoned before every call (NaN; -1 for integers): write every element",
        "accumulate": "zeroed by the harness before every call: the kernel adds into it",
        "inout": "restored to its input values before every call",
    }
    for a in buffers:
        role = a.role_for(precision)
        if role in before:
            lines.append(f"- {a.name}: {before[role]}.")
    return "\n".join(lines)


def system_prompt(role: str, deps: Deps) -> str:
    spec, variant = deps.spec, deps.variant
    task = variant.task
    notes = "\n".join(f"- {k}: {v}" for k, v in task.notes.items() if k != "published_timing")
    t = deps.settings.target
    return render(
        "system",
        role=role,
        task=task.name,
        precision=spec.precision,
        summary=task.summary,
        notes=("Notes:\n" + notes + "\n") if notes else "",
        prototype=variant.candidate_prototype.c_declaration(),
        arguments=arguments_text(variant),
        entry=variant.candidate_entry,
        gpu_name=t.name,
        compute_capability=t.compute_capability,
        sm_count=t.sm_count,
        l2_mib=t.l2_mib,
        bandwidth=t.memory_bandwidth_tbs,
    )


def results_table(evaluation: dict[str, Any] | None, candidate: bool = True) -> str:
    """Per-size results of an evaluation: times, speedup, roofline position."""
    if not evaluation:
        return "(no measurements)"
    lines = ["| size | baseline us | kernel us | speedup | % of roofline |", "|---|---|---|---|---|"]
    for row in evaluation.get("rows", []):
        base = (row.get("baseline") or {}).get("median_us")
        cand = (row.get("candidate") or {}).get("median_us") if candidate else None
        speed = row.get("speedup")
        pct = row.get("candidate_roofline_pct") if candidate and cand is not None else row.get("baseline_roofline_pct")
        fmt = lambda v, f: "-" if v is None else format(v, f)  # noqa: E731
        size = ", ".join(f"{k}={v}" for k, v in row.get("params", {}).items())
        lines.append(
            f"| {size} | {fmt(base, '.2f')} | {fmt(cand if cand is not None else base, '.2f')} | {fmt(speed, '.2f')} | {fmt(pct, '.1f')} |"
        )
    score = evaluation.get("score")
    if score is not None:
        lines.append(f"\nScore P = {score:.3f}")
    flags = sorted({f for row in evaluation.get("rows", []) for f in row.get("flags", [])})
    if flags:
        lines.append("Flags: " + ", ".join(flags))
    return "\n".join(lines)


def best_context(state: dict[str, Any], variant: Variant) -> dict[str, str]:
    """The best kernel so far (or the baseline when none is correct yet) and its results."""
    best = state.get("best")
    if best:
        return {
            "best_label": f"round {best['round']}, P = {best['score']:.3f}",
            "best_source": best["source"],
            "results": results_table(best.get("evaluation")),
        }
    baseline = state.get("baseline", {})
    return {
        "best_label": f"the baseline; its entry point is `{variant.entry}`, yours must be `{variant.candidate_entry}`",
        "best_source": variant.task.baseline_source(),
        "results": results_table(baseline.get("evaluation"), candidate=False),
    }


def history_text(state: dict[str, Any]) -> str:
    rounds = state.get("round_log", [])
    if not rounds:
        return "Nothing yet: this is the first round."
    lines = []
    for r in rounds:
        score = f", P = {r['score']:.3f}" if r.get("score") is not None else ""
        lines.append(
            f"- round {r['round']}: {r['strategy_title']} -> {r['verdict']}{score}"
            + (f" ({r['message'][:200]})" if r.get("message") and r["verdict"] != "ok" else "")
            + f" [{r['debug_steps']} debug step(s)]"
        )
    return "\n".join(lines)


def flag_allowlist() -> str:
    return FLAG_ALLOWLIST_TEXT
