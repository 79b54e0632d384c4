"""Check every baseline against its float64 reference on the GPU (no timing), writing JSON as it goes.

Several shards (--shard 0/3, 1/3, 2/3) may run side by side: no timing is taken, so they do not disturb each other's results.

    python3 scripts/check_baselines.py --sizes paper --output docs/results/baseline_checks.json [--task T ...]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from bench_tasks import task_names
from bench_tasks.harness import evaluate
from bench_tasks.provenance import provenance


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="paper")
    ap.add_argument("--task", action="append")
    ap.add_argument("--output", type=Path, required=True)
    ap.add_argument("--shard", default="0/1", help="I/N: only every N-th task from the I-th (run N processes side by side)")
    args = ap.parse_args()
    index, count = (int(x) for x in args.shard.split("/"))
    doc = {"provenance": provenance(), "results": []}
    for task in (args.task or task_names())[index::count]:
        for precision in ("fp32", "bf16"):
            t0 = time.time()
            result = evaluate(task, precision, None, args.sizes, timing=False)
            print(
                task,
                precision,
                result.verdict.value,
                f"{time.time() - t0:.1f} s",
                result.message[:300],
                [round(r.max_rel_err or 0, 6) for r in result.rows],
                flush=True,
            )
            doc["results"].append(result.model_dump(mode="json"))
            args.output.write_text(json.dumps(doc))


if __name__ == "__main__":
    main()
