"""compute-sanitizer over the positive controls, the honest corpus, the BF16 twins and the baselines (issue 41), with the
time per kernel, into one JSON record (provenance, GPU, driver, settings, one entry per kernel, a summary).

    python scripts/sanitize_sweep.py --what controls,solo --workers 1 --out OUT/sanitize_part1.json
    python scripts/sanitize_sweep.py --what honest,twins --workers 8 --out OUT/sanitize_part2.json
    python scripts/sanitize_sweep.py --what baselines --workers 8 --out OUT/sanitize_part3.json

`solo`: a sample of kernels run one at a time (their `seconds` is one kernel's four tools alone on the GPU, the figure
for docs/results); with --workers > 1 several kernels share the GPU (the tools are not timed work: only the wall time per
kernel grows, recorded with `workers`). The record is rewritten after every kernel; past --deadline-s no kernel starts.
A GPU whose runtime refuses compute-sanitizer gives not_run verdicts: recorded as such (`ok` null), never as clean.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
import tomllib
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_tasks import all_tasks, load_task
from bench_tasks.harness.result import SanitizerStatus, SanitizerVerdict, sanitizer_status
from bench_tasks.harness.sanitize import documented_findings, sanitize
from bench_tasks.provenance import provenance
from settings import get_harness_settings

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests" / "bench"
CONTROLS = {
    "memcheck": "memcheck_oob_read.cu",
    "racecheck": "racecheck_missing_syncthreads.cu",
    "initcheck": "initcheck_unwritten_scratch.cu",
    "synccheck": "synccheck_syncwarp_mask.cu",
}
SOLO = [("vector_add", "fp32"), ("softmax", "fp32"), ("matrix_mul", "fp32"), ("layer_norm", "bf16"), ("conv_2d", "fp32"), ("FFT", "fp32")]


def kernels(what: str) -> list[dict]:
    """The kernels of one group: kind, task, precision, file (None: the baseline), expected (tool planted, or '')."""
    if what == "controls":
        return [
            {"kind": "control", "task": "vector_add", "precision": "fp32", "file": f"tests/bench/sanitizer_controls/{f}", "planted": t}
            for t, f in CONTROLS.items()
        ]
    if what == "solo":
        return [{"kind": "baseline", "task": t, "precision": p, "file": None, "planted": ""} for t, p in SOLO]
    if what == "honest":
        manifest = tomllib.loads((TESTS / "honest" / "manifest.toml").read_text())["kernel"]
        return [
            {"kind": "honest", "task": k["task"], "precision": k["precision"], "file": f"tests/bench/honest/{k['file']}", "planted": ""}
            for k in manifest
        ]
    if what == "twins":
        return [
            {"kind": "bf16_twin", "task": p.stem, "precision": "bf16", "file": f"tests/bench/bf16_twins/{p.name}", "planted": ""}
            for p in sorted((TESTS / "bf16_twins").glob("*.cu"))
        ]
    if what == "baselines":
        return [
            {"kind": "baseline", "task": t.name, "precision": p, "file": None, "planted": ""}
            for t in all_tasks()
            for p in sorted(t.prototypes)
        ]
    raise SystemExit(f"unknown group {what!r}: controls, solo, honest, twins, baselines")


def judge(entry: dict, verdicts: list[SanitizerVerdict]) -> tuple[bool | None, str]:
    """(as expected, why): a control's tool must flag it; anything else must be clean (a baseline's documented
    findings excepted); None where the tool could not run."""
    if any(v.status == SanitizerStatus.not_run for v in verdicts):
        why = next(v.reason for v in verdicts if v.status == SanitizerStatus.not_run)
        return None, f"not_run: {why}"
    if entry["planted"]:
        hit = next(v for v in verdicts if v.tool == entry["planted"])
        return hit.status == SanitizerStatus.findings, f"{hit.tool}: {hit.status.value} {hit.kernel}"
    allowed = documented_findings(load_task(entry["task"])) if entry["kind"] == "baseline" else {}
    found = [v for v in verdicts if v.status == SanitizerStatus.findings and v.tool not in allowed]
    return not found, "; ".join(f"{v.tool}: {v.errors} error(s) in {v.kernel}: {' | '.join(v.report[:3])}" for v in found) or "clean"


def run_one(entry: dict, settings) -> dict:
    source = (ROOT / entry["file"]).read_text() if entry["file"] else None
    tools = [entry["planted"]] if entry["planted"] else None
    t0 = time.monotonic()
    verdicts = sanitize(entry["task"], entry["precision"], source, settings=settings, **({"tools": tools} if tools else {}))
    seconds = time.monotonic() - t0
    ok, why = judge(entry, verdicts)
    status = sanitizer_status(verdicts)
    return {
        **entry,
        "seconds": round(seconds, 2),
        "status": status.value if status else None,
        "ok": ok,
        "why": why,
        "verdicts": [v.model_dump(mode="json") for v in verdicts],
    }


def gpu() -> dict:
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"], capture_output=True, text=True, timeout=30
        ).stdout.strip()
    except (OSError, subprocess.TimeoutExpired) as exc:
        return {"error": str(exc)}
    name, _, driver = out.splitlines()[0].partition(",") if out else ("", "", "")
    return {"name": name.strip(), "driver": driver.strip()}


def summary(entries: list[dict]) -> dict:
    by_kind: dict[str, dict] = {}
    for e in entries:
        k = by_kind.setdefault(e["kind"], {"kernels": 0, "as_expected": 0, "unexpected": [], "not_run": 0, "seconds": []})
        k["kernels"] += 1
        if e["ok"] is True:
            k["as_expected"] += 1
        elif e["ok"] is None:
            k["not_run"] += 1
        else:
            k["unexpected"].append(f"{e['task']}/{e['precision']} {e['file'] or 'baseline'}: {e['why']}")
        k["seconds"].append(e["seconds"])
    for k in by_kind.values():
        s = sorted(k.pop("seconds"))
        k["seconds_median"] = s[len(s) // 2] if s else None
        k["seconds_max"] = s[-1] if s else None
    return by_kind


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--what", default="controls,solo", help="groups: controls, solo, honest, twins, baselines")
    parser.add_argument("--workers", type=int, default=1, help="kernels sanitized at once on the GPU")
    parser.add_argument("--deadline-s", type=float, default=540.0, help="start no kernel after this many seconds")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--resume", action="store_true", help="keep the kernels --out already holds and do the rest")
    args = parser.parse_args()
    settings = get_harness_settings()
    todo = [e for what in args.what.split(",") if what for e in kernels(what.strip())]
    record = {
        "provenance": provenance(),
        "gpu": gpu(),
        "settings": {"sanitizer_tool_timeout_s": settings.sanitizer_tool_timeout_s, "workers": args.workers, "groups": args.what},
        "kernels": [],
    }
    if args.resume and args.out.is_file():
        previous = json.loads(args.out.read_text())
        record["kernels"] = previous["kernels"]
        record["earlier"] = [*previous.get("earlier", []), {"provenance": previous["provenance"], "settings": previous["settings"]}]
        done = {(k["kind"], k["task"], k["precision"], k["file"]) for k in record["kernels"]}
        todo = [e for e in todo if (e["kind"], e["task"], e["precision"], e["file"]) not in done]
        todo_all = len(todo) + len(record["kernels"])
    else:
        todo_all = len(todo)
    lock, started = threading.Lock(), time.monotonic()
    args.out.parent.mkdir(parents=True, exist_ok=True)

    def save() -> None:
        record["wall_seconds"] = round(time.monotonic() - started, 1)
        record["summary"] = summary(record["kernels"])
        record["left_out"] = todo_all - len(record["kernels"])
        tmp = args.out.with_suffix(".tmp")
        tmp.write_text(json.dumps(record, indent=1))
        os.replace(tmp, args.out)

    def guarded(entry: dict) -> dict | None:
        if time.monotonic() - started > args.deadline_s:
            return None
        return run_one(entry, settings)

    with ThreadPoolExecutor(max_workers=args.workers) as pool:
        for fut in as_completed([pool.submit(guarded, e) for e in todo]):
            result = fut.result()
            if result is None:
                continue
            with lock:
                record["kernels"].append(result)
                print(
                    f"{result['kind']:9} {result['task']}/{result['precision']} {result['seconds']:6.1f} s  {result['ok']}  {result['why'][:160]}",
                    flush=True,
                )
                save()
    save()
    print(json.dumps(record["summary"], indent=1))


if __name__ == "__main__":
    main()
