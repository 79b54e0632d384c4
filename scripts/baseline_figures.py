"""The suite issues' figures from `cudamaster bench run` result files (baselines at paper sizes), a benchmark
summary, not a test:

    python3 scripts/baseline_figures.py RUN.json [RUN2.json ...] --output docs/results/baseline_figures_....json

- per variant: the baseline evaluation's wall time (compile, checks and timing of every paper size);
- per task and precision: the baseline's % of the roofline floor at its largest paper size (the size with the
  largest complexity T), with the baseline's median time and the floor.

Several files are read as one suite (a run cut short and the command that ran the rest); a variant measured
in more than one keeps the last. Each input file's provenance (command, commit, date) is copied as is; the GPU
and driver come from the results themselves.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench_tasks.provenance import provenance  # noqa: E402


def figures(runs: list[dict]) -> dict:
    results: dict[str, dict] = {}
    for run in runs:
        for r in run["results"]:
            if r["implementation"] == "baseline" and r["size_set"] == "paper":
                results[f"{r['task']}/{r['precision']}"] = r
    variants = {}
    for key, r in sorted(results.items()):
        rows = [row for row in r["rows"] if row.get("baseline")]
        largest = max(rows, key=lambda row: row["complexity"]) if rows else None
        variants[key] = {
            "verdict": r["verdict"],
            "wall_s": r["wall_seconds"],
            "sizes_passed": f"{sum(row['passed'] for row in r['rows'])}/{len(r['rows'])}",
            "largest_paper_size": largest["params"] if largest else None,
            "baseline_median_us": largest["baseline"]["median_us"] if largest else None,
            "roofline_floor_us": largest["roofline_floor_us"] if largest else None,
            "baseline_roofline_pct": largest["baseline_roofline_pct"] if largest else None,
        }
    walls = [v["wall_s"] for v in variants.values()]
    gpus = sorted({(r["gpu"] or {}).get("name", "") for r in results.values() if r.get("gpu")})
    drivers = sorted({(r["gpu"] or {}).get("driver_version", "") for r in results.values() if r.get("gpu")})
    return {
        "variants_measured": len(variants),
        "all_ok": all(v["verdict"] == "ok" for v in variants.values()),
        "not_ok": sorted(k for k, v in variants.items() if v["verdict"] != "ok"),
        "wall_s_per_variant": {
            "mean": round(statistics.fmean(walls), 2) if walls else None,
            "median": round(statistics.median(walls), 2) if walls else None,
            "max": max(walls) if walls else None,
            "target_mean": 3.0,
        },
        "gpu": gpus,
        "driver": drivers,
        "variants": variants,
    }


def to_markdown(doc: dict) -> str:
    lines = [
        "| variant | verdict | sizes passed | wall s | largest paper size | baseline µs | roofline floor µs | % of roofline |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for key, v in doc["variants"].items():
        size = ", ".join(f"{k}={x}" for k, x in (v["largest_paper_size"] or {}).items())
        pct = v["baseline_roofline_pct"]
        lines.append(
            f"| {key} | {v['verdict']} | {v['sizes_passed']} | {v['wall_s']:.1f} | {size} | {v['baseline_median_us'] or 0:.1f} "
            f"| {v['roofline_floor_us'] or 0:.2f} | {'' if pct is None else f'{pct:.3g}'} |"
        )
    w = doc["wall_s_per_variant"]
    head = (
        f"{doc['variants_measured']} variants, {', '.join(doc['gpu'])}, driver {', '.join(doc['driver'])}; wall per variant: "
        f"mean {w['mean']} s, median {w['median']} s, max {w['max']} s (target mean {w['target_mean']} s)\n\n"
    )
    return head + "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--output", type=Path, required=True, help="JSON; a Markdown table is written beside it (.md)")
    args = parser.parse_args()
    runs = [json.loads(p.read_text()) for p in args.runs]
    doc = {
        "provenance": provenance(),
        "inputs": [
            {"file": p.name, "provenance": run.get("provenance"), "wall_seconds": run.get("wall_seconds")}
            for p, run in zip(args.runs, runs, strict=True)
        ],
        **figures(runs),
    }
    args.output.write_text(json.dumps(doc, indent=1))
    args.output.with_suffix(".md").write_text(to_markdown(doc))
    print(f"wrote {args.output} and {args.output.with_suffix('.md')}: {doc['variants_measured']} variants")


if __name__ == "__main__":
    main()
