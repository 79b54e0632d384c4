"""Write app/vendor_reference.csv, the vendor times the review queue compares candidates with (app/reviews.py),
from vendor runs committed under docs/results:

    python3 scripts/vendor_reference.py [RUN.json ...] [--output app/vendor_reference.csv]

With no RUN files: every docs/results/vendor_run_*.json. Runs are applied in the order of their provenance
dates, so a later run of a variant (a fix) replaces an earlier one size by size. Kept: sizes that passed in an
evaluation whose verdict is ok, with the vendor reference timed (a wrong or failed vendor reference is no
evidence of anything).
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.vendor_reference import COLUMNS, SHIPPED, params_key  # noqa: E402
from bench_tasks.provenance import provenance  # noqa: E402


def rows_of(runs: list[tuple[str, dict]]) -> dict[tuple[str, str, str], dict]:
    out: dict[tuple[str, str, str], dict] = {}
    for name, run in sorted(runs, key=lambda nr: nr[1].get("provenance", {}).get("date", "")):
        for result in run["results"]:
            if result.get("implementation") != "vendor" or result.get("verdict") != "ok":
                continue
            gpu = (result.get("gpu") or {}).get("name", "")
            for row in result["rows"]:
                timed = row.get("candidate") or {}
                if not row.get("passed") or not timed.get("median_us") or row.get("candidate_roofline_pct") is None:
                    continue
                key = (result["task"], result["precision"], params_key(row["params"]))
                out[key] = {
                    "task": key[0],
                    "precision": key[1],
                    "params": key[2],
                    "median_us": f"{timed['median_us']:.4g}",
                    "roofline_pct": f"{row['candidate_roofline_pct']:.4g}",
                    "gpu": gpu,
                    "libraries": "+".join(result.get("vendor_libraries") or []),
                    "source": name,
                }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="*", type=Path)
    parser.add_argument("--output", type=Path, default=SHIPPED)
    args = parser.parse_args()
    paths = args.runs or sorted((ROOT / "docs" / "results").glob("vendor_run_*.json"))
    rows = rows_of([(p.name, json.loads(p.read_text())) for p in paths])
    with open(args.output, "w", newline="") as f:
        f.write(f"# written by {provenance()['command']} at {provenance()['git_commit'][:12]} from {', '.join(p.name for p in paths)}\n")
        writer = csv.DictWriter(f, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows[k] for k in sorted(rows))
    print(f"{len(rows)} sizes of {len({k[:2] for k in rows})} variants -> {args.output}")


if __name__ == "__main__":
    main()
