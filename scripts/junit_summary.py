"""Turn pytest JUnit XML files from the GPU machine into a JSON record for docs/results/.

    python3 scripts/junit_summary.py OUT/gpu_tests.xml [MORE.xml ...] --commit SHA --command "..." --env OUT/env.txt \
        [--collected OUT/gpu_collected.txt] --output docs/results/gpu_tests_SHA.json

--env is the nvidia-smi/date file scripts/device_checks.sh writes (GPU, driver, date of the run).
Several XML files (the shards of scripts/device_gpu_suite.sh, from several device calls) make one record; a test in
two of them (a shard run again) counts once, as its last file has it. Each test is named by its node id where the
XML carries one (tests/conftest.py puts it on every `gpu` test), else as `classname::name`.
--collected: the node ids the run should have covered (`pytest --collect-only -q -m gpu`, one a line): the record
lists under `not_run` each one that is in no XML file, and counts them.
"""

from __future__ import annotations

import argparse
import json
import xml.etree.ElementTree as ET
from pathlib import Path


def _outcome(tc: ET.Element) -> str:
    if tc.find("failure") is not None or tc.find("error") is not None:
        return "failed"
    return "skipped" if tc.find("skipped") is not None else "passed"


def _case(tc: ET.Element) -> dict:
    properties = {p.get("name"): p.get("value") for p in tc.iter("property")}
    node = next((tc.find(tag) for tag in ("failure", "error", "skipped") if tc.find(tag) is not None), None)
    return {
        "test": properties.get("nodeid") or f"{tc.get('classname')}::{tc.get('name')}",
        "outcome": _outcome(tc),
        "seconds": float(tc.get("time", 0)),
        **({"message": node.get("message", "")[:300]} if node is not None else {}),
    }


def summary(*xmls: Path, collected: list[str] | None = None) -> dict:
    cases: dict[str, dict] = {}
    for xml in xmls:
        for tc in ET.parse(xml).getroot().iter("testcase"):
            case = _case(tc)
            cases.pop(case["test"], None)  # a shard run again: its last result, in the order the files were given
            cases[case["test"]] = case
    counts = {k: sum(c["outcome"] == k for c in cases.values()) for k in ("passed", "failed", "skipped")}
    doc: dict = {"counts": counts, "tests": list(cases.values())}
    if collected is not None:
        doc["not_run"] = [t for t in collected if t not in cases]
        counts["not_run"] = len(doc["not_run"])
    return doc


def read_collected(path: Path) -> list[str]:
    """Node ids from `pytest --collect-only -q` output (its summary and blank lines left out)."""
    return [line.strip() for line in path.read_text().splitlines() if "::" in line and not line.startswith(" ")]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("xml", type=Path, nargs="+")
    ap.add_argument("--commit", required=True)
    ap.add_argument("--command", required=True)
    ap.add_argument("--env", type=Path, required=True)
    ap.add_argument("--collected", type=Path, help="the node ids the run should have covered (pytest --collect-only -q)")
    ap.add_argument("--output", type=Path, required=True)
    args = ap.parse_args()
    lines = args.env.read_text().splitlines()
    gpu, driver = [s.strip() for s in lines[1].split(",")[:2]]
    doc = {
        "provenance": {"commit": args.commit, "command": args.command, "gpu": gpu, "driver": driver, "date": lines[2].strip()},
        **summary(*args.xml, collected=read_collected(args.collected) if args.collected else None),
    }
    args.output.write_text(json.dumps(doc, indent=1) + "\n")


if __name__ == "__main__":
    main()
