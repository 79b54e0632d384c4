"""The share of correct evaluations the review rule (app/reviews.py, default settings) flags, on the real
evaluations committed under docs/results (a figure, not a test):

    python3 scripts/review_flagged_share.py [--output docs/results/review_flagged_share_<commit>.json]

Two kinds of stored evaluation hold a measured candidate:
- campaign databases (docs/results/campaign_*/service.db.gz): every attempt the service stored, as the service
  would have judged it when storing it (verdict and evaluation document);
- vendor runs (docs/results/vendor_run_*.json): the vendor libraries (cuBLAS, cuDNN, cuSPARSE, cuFFT, CUB)
  measured as candidates against the same naive baselines: real, fast, honest kernels, the nearest thing committed
  here to the published optimized kernels. The latest run of each variant and size set counts. The vendor
  comparison is skipped for them (each is its own reference).
Suite and baseline runs time the baseline alone (nothing to flag) and are not read.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sqlite3
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.reviews import ReviewRule  # noqa: E402
from bench_tasks.provenance import provenance  # noqa: E402
from settings import ServiceSettings  # noqa: E402

RESULTS = ROOT / "docs" / "results"
KINDS = {  # words of a reason -> the rule that gave it
    "over the review threshold": "speedup_threshold",
    "late work": "late_work",
    "wall-clock": "wall_gap",
    "of the roofline floor (threshold": "roofline",
    "spread widely": "spread",
    "not redrawn": "inputs_not_refreshed",
    "checked timed pairs": "no_timed_pair_checked",
    "checked wrong": "timed_call_disagrees",
    "faster than the vendor": "vendor",
    "speedup jumps": "jump",
}


def kind(reason: str) -> str:
    return next((k for words, k in KINDS.items() if words in reason), "other")


def timed(evaluation: dict[str, Any]) -> bool:
    return any(row.get("candidate") for row in evaluation.get("rows") or [])


def campaign_evaluations(path: Path) -> list[tuple[str, str, dict[str, Any]]]:
    """(label, verdict, evaluation) of every attempt stored in a gzipped campaign database."""
    with tempfile.NamedTemporaryFile(suffix=".db") as tmp:
        tmp.write(gzip.decompress(path.read_bytes()))
        tmp.flush()
        with sqlite3.connect(tmp.name) as db:
            rows = db.execute("SELECT a.id, j.task, j.precision, a.verdict, a.evaluation FROM attempts a JOIN jobs j ON j.id = a.job_id")
            return [(f"attempt {i} {task}/{prec}", verdict, json.loads(ev) if ev else {}) for i, task, prec, verdict, ev in rows]


def vendor_evaluations(paths: list[Path]) -> list[tuple[str, str, dict[str, Any]]]:
    latest: dict[tuple[str, str, str], tuple[str, dict[str, Any]]] = {}
    runs = sorted((json.loads(p.read_text()) for p in paths), key=lambda run: run.get("provenance", {}).get("date", ""))
    for run in runs:
        for r in run["results"]:
            if r.get("implementation") == "vendor":
                latest[(r["task"], r["precision"], r["size_set"])] = (run["provenance"]["git_commit"], r)
    return [(f"{t}/{p} {s} sizes (vendor run at {c})", r["verdict"], r) for (t, p, s), (c, r) in sorted(latest.items())]


def share(rule: ReviewRule, evaluations: list[tuple[str, str, dict[str, Any]]]) -> dict[str, Any]:
    correct = [(label, ev) for label, verdict, ev in evaluations if verdict == "ok" and timed(ev)]
    flagged = {label: rule.reasons(ev, "ok") for label, ev in correct}
    flagged = {label: reasons for label, reasons in flagged.items() if reasons}
    kinds = Counter(k for reasons in flagged.values() for k in {kind(r) for r in reasons})
    return {
        "evaluations": len(evaluations),
        "correct_with_timed_candidate": len(correct),
        "flagged": len(flagged),
        "flagged_share": round(len(flagged) / len(correct), 4) if correct else None,
        "flagged_by_rule": dict(sorted(kinds.items())),
        "flagged_evaluations": flagged,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", type=Path, default=None, help="default: docs/results/review_flagged_share_<commit>.json")
    args = parser.parse_args()
    settings = ServiceSettings()
    rule = ReviewRule.of(settings)
    sources = {str(p.relative_to(ROOT)): share(rule, campaign_evaluations(p)) for p in sorted(RESULTS.glob("campaign_*/service.db.gz"))}
    vendor_runs = sorted(RESULTS.glob("vendor_run_*.json"))
    sources["vendor references (" + ", ".join(p.name for p in vendor_runs) + ")"] = share(rule, vendor_evaluations(vendor_runs))
    prov = provenance()
    out = {
        "what": "share of correct evaluations (verdict ok, a timed candidate) that app/reviews.py's ReviewRule flags with the "
        "default service settings, on the evaluations committed under docs/results",
        "rule": {k: v for k, v in vars(rule).items() if k != "vendor"},
        "settings": {k: getattr(settings, k) for k in type(settings).model_fields if k.startswith("review_")},
        "sources": sources,
        "provenance": prov,
    }
    output = args.output or RESULTS / f"review_flagged_share_{prov['git_commit'][:7]}.json"
    output.write_text(json.dumps(out, indent=2, ensure_ascii=False) + "\n")
    for name, s in sources.items():
        print(f"{name}: {s['flagged']} of {s['correct_with_timed_candidate']} flagged ({s['flagged_share']}) {s['flagged_by_rule']}")
    print(f"-> {output}")


if __name__ == "__main__":
    main()
