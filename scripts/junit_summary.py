"""Turn a pytest JUnit XML file from the GPU machine into a JSON record for docs/results/.

    python3 scripts/junit_summary.py OUT/gpu_tests.xml --commit SHA --command "..." --env OUT/env.txt \
        --output docs/results/gpu_tests_SHA.json

--env is the nvidia-smi/date file scripts/device_checks.sh writes (GPU, driver, date of the run).
"""

from __future__ import annotations

import argparse
import json
import xml.etree.ElementTree as ET
from pathlib import Path


def summary(xml: Path) -> dict:
    root = ET.parse(xml).getroot()
    cases = []
    for tc in root.iter("testcase"):
        outcome = (
            "failed"
            if tc.find("failure") is not None or tc.find("error") is not None
            else "skipped"
            if tc.find("skipped") is not None
            else "passed"
        )
        node = tc.find("failure") if tc.find("failure") is not None else tc.find("skipped")
        cases.append(
            {
                "test": f"{tc.get('classname')}::{tc.get('name')}",
                "outcome": outcome,
                "seconds": float(tc.get("time", 0)),
                **({"message": node.get("message", "")[:300]} if node is not None else {}),
            }
        )
    counts = {k: sum(c["outcome"] == k for c in cases) for k in ("passed", "failed", "skipped")}
    return {"counts": counts, "tests": cases}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("xml", type=Path)
    ap.add_argument("--commit", required=True)
    ap.add_argument("--command", required=True)
    ap.add_argument("--env", type=Path, required=True)
    ap.add_argument("--output", type=Path, required=True)
    args = ap.parse_args()
    lines = args.env.read_text().splitlines()
    gpu, driver = [s.strip() for s in lines[1].split(",")[:2]]
    doc = {
        "provenance": {"commit": args.commit, "command": args.command, "gpu": gpu, "driver": driver, "date": lines[2].strip()},
        **summary(args.xml),
    }
    args.output.write_text(json.dumps(doc, indent=1) + "\n")


if __name__ == "__main__":
    main()
