"""Baseline medians of two suite runs, size by size: did a harness change move the baselines' times?

    python3 scripts/compare_suites.py --old OLD.json [OLD2.json ...] --new NEW.json [NEW2.json ...] --output OUT.json

Each file is a `cudamaster bench run` result file (several per side are read as one suite). For every variant and
paper size measured on both sides, the ratio new/old of the baseline's median time; reported separately for each
variant's first timed size (the one a driver warms up for, from an idle or a just-busy GPU) and for the others,
as median and deciles. A benchmark summary, not a test.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path


def medians(files: list[Path]) -> dict[tuple[str, str], list[float | None]]:
    out: dict[tuple[str, str], list[float | None]] = {}
    for f in files:
        for r in json.loads(f.read_text())["results"]:
            if r.get("implementation", "baseline") != "baseline":
                continue
            out[(r["task"], r["precision"])] = [(row.get("baseline") or {}).get("median_us") for row in r["rows"]]
    return out


def summary(ratios: list[float]) -> dict:
    if len(ratios) < 2:
        return {"n": len(ratios)}
    return {
        "n": len(ratios),
        "median": round(statistics.median(ratios), 4),
        "deciles": [round(x, 4) for x in statistics.quantiles(ratios, n=10)],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", type=Path, nargs="+", required=True)
    ap.add_argument("--new", type=Path, nargs="+", required=True)
    ap.add_argument("--output", type=Path, required=True)
    args = ap.parse_args()
    old, new = medians(args.old), medians(args.new)
    first: list[float] = []
    others: list[float] = []
    for key, times in new.items():
        for i, (a, b) in enumerate(zip(times, old.get(key, []), strict=False)):
            if a and b:
                (first if i == 0 else others).append(a / b)
    provenance = {str(f): json.loads(f.read_text()).get("provenance") for f in [*args.old, *args.new]}
    out = {
        "command": "python3 scripts/compare_suites.py --old " + " ".join(map(str, args.old)) + " --new " + " ".join(map(str, args.new)),
        "runs": provenance,
        "ratio_new_over_old": {"first_timed_size": summary(first), "other_sizes": summary(others)},
    }
    args.output.write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out["ratio_new_over_old"]))


if __name__ == "__main__":
    main()
