"""On the GPU machine: the six export variants (tests/support/export_jobs.py) end to end, and a JSON record (issue 41).

1. (GPU, one at a time) each kernel evaluated by the harness at its paper sizes (a custom task: its own sizes), and
   stored as a finished job in a fresh SQLite database, the way the runner stores the agent's events;
2. (CPU, in parallel) `cudamaster export JOB -o DIR`, the bundle built with CMake (or build.sh with nvcc where
   cmake is missing: recorded), its PyTorch extensions built with setup.py (no ninja needed);
3. (GPU, one at a time) ctest (make_inputs + test_kernel), bench_kernel --json (its speedup per size against the
   job's: within 10 %), pytest test_torch.py with the machine's torch.

    python scripts/device_export.py OUT_DIR      # writes OUT_DIR/device_export.json and each bundle's logs
    python scripts/device_export.py OUT_DIR --fake --only custom,sparse   # the plumbing without a GPU: FAKE
        evaluations, export and build only (no torch build, no GPU steps)
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from app.db.engine import make_engine, make_sessionmaker  # noqa: E402
from app.db.migrate import upgrade  # noqa: E402
from bench_tasks.harness import evaluate  # noqa: E402
from bench_tasks.provenance import provenance  # noqa: E402
from bench_tasks.spec import load_task, register_task  # noqa: E402
from tests.support import export_jobs as ej  # noqa: E402

AGREE = 0.10  # the bundle's speedup within 10 % of the job's, per size


BUNDLE_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # a bundle stands alone: not this repo's modules


def sh(cmd: list[str], cwd: Path, log: Path, timeout: float = 600) -> tuple[int, float]:
    t0 = time.monotonic()
    env = os.environ if cwd == REPO else BUNDLE_ENV
    with open(log, "a") as out:
        out.write(f"$ {' '.join(cmd)}\n")
        out.flush()
        try:
            rc = subprocess.run(cmd, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, timeout=timeout, env=env).returncode
        except subprocess.TimeoutExpired:
            rc = 124
    return rc, round(time.monotonic() - t0, 1)


def evaluate_and_store(out: Path, cases: list[ej.Case], fake: bool) -> tuple[str, dict]:
    url = f"sqlite:///{out / 'service.db'}"
    upgrade(url)
    engine = make_engine(url)
    jobs = {}
    with make_sessionmaker(engine)() as session:
        for case in cases:
            t0 = time.monotonic()
            if case.name == "custom":
                task_id = ej.store_custom_task(session, None)
                from app import custom_tasks
                from app.db.models import CustomTask

                task = custom_tasks.to_task(session.get(CustomTask, task_id))
                register_task(task)
            else:
                task = load_task(case.task)
            if fake:
                doc = ej.fake_evaluation(task.name, case.precision, task.size_list("paper"))
            else:
                doc = evaluate(task, case.precision, case.source(), "paper").model_dump(mode="json")
            entry = {"task": task.name, "precision": case.precision, "verdict": doc["verdict"], "score": doc["score"]}
            entry["evaluate_s"] = round(time.monotonic() - t0, 1)
            if doc["verdict"] == "ok":
                job = ej.store_job(
                    session, task=task.name, precision=case.precision, source=case.source(), evaluation=doc, api_key_id=None, team="default"
                )
                entry |= {"job": job.id, "job_speedups": {json.dumps(r["params"], sort_keys=True): r["speedup"] for r in doc["rows"]}}
            else:
                entry["message"] = doc.get("message", "")[:500]
            jobs[case.name] = entry
            print(f"{case.name}: {entry['verdict']} P={entry['score']} ({entry['evaluate_s']} s)", flush=True)
    engine.dispose()
    return url, jobs


def build(name: str, entry: dict, url: str, out: Path, cmake: str | None, fake: bool) -> dict:
    folder, log = out / name, out / f"{name}.log"
    rec: dict = {}
    rc, rec["export_s"] = sh([sys.executable, "-m", "app.cli", "export", entry["job"], "-o", str(folder), "--database-url", url], REPO, log)
    rec["export_rc"] = rc
    if rc != 0:
        return rec
    if cmake:
        configure = [cmake, "-S", ".", "-B", "build", "-DCMAKE_BUILD_TYPE=Release", f"-DPython3_EXECUTABLE={sys.executable}"]
        rc1, t1 = sh(configure, folder, log)
        rc2, t2 = sh([cmake, "--build", "build", "-j", "4"], folder, log) if rc1 == 0 else (rc1, 0.0)
        rec |= {"build": "cmake", "build_rc": rc2, "build_s": t1 + t2}
    if not cmake or rec["build_rc"] != 0:  # no cmake here, or it failed (too old?): nvcc directly, recorded
        rc, t = sh(["./build.sh", "build"], folder, log)
        rec |= {"build": "build.sh" + (" (cmake failed)" if cmake else " (no cmake on this machine)"), "build_rc": rc, "build_s": t}
    if fake:
        return rec
    rc, rec["torch_build_s"] = sh([sys.executable, "setup.py", "build_ext", "--inplace"], folder, log, timeout=900)
    rec["torch_build_rc"] = rc
    return rec


def run_gpu_steps(name: str, entry: dict, rec: dict, out: Path, cmake: str | None) -> None:
    folder, log = out / name, out / f"{name}.log"
    data = ["--data", str(folder / "build" / "inputs")]
    if rec.get("build_rc") == 0:
        if rec["build"] == "cmake":
            ctest = str(Path(cmake or "ctest").with_name("ctest"))  # ctest --test-dir needs CMake 3.20: run it in build/
            rec["test_rc"], rec["test_s"] = sh([ctest, "--output-on-failure"], folder / "build", log)
        else:
            sh([sys.executable, "make_inputs.py", "--seed", "1", "--out", "build/inputs"], folder, log)
            rec["test_rc"], rec["test_s"] = sh(["build/test_kernel", "--seed", "1", *data], folder, log)
        rec["bench_rc"], rec["bench_s"] = sh(["build/bench_kernel", "--seed", "1", *data, "--json", "bench.json"], folder, log)
        if rec["bench_rc"] == 0:
            rec["speedups"] = compare_speedups(entry, json.loads((folder / "bench.json").read_text()), load_task_doc(folder))
    if rec.get("torch_build_rc") == 0:
        rec["pytest_rc"], rec["pytest_s"] = sh(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_torch.py"], folder, log
        )


def load_task_doc(folder: Path) -> dict:
    return json.loads((folder / "task.json").read_text())


def compare_speedups(entry: dict, bench: dict, doc: dict) -> list[dict]:
    rows = []
    for size, row in zip(doc["bench_sizes"], bench["rows"], strict=True):
        job = entry["job_speedups"].get(json.dumps(size["params"], sort_keys=True))
        ratio = row["speedup"] / job if job else None
        rows.append(
            {
                "params": size["params"],
                "job": job,
                "bundle": row["speedup"],
                "ratio": ratio,
                "agree": ratio is not None and abs(ratio - 1) <= AGREE,
            }
        )
    return rows


def save(out: Path, jobs: dict, builds: dict, seconds: dict, cmake: str | None, fake: bool) -> dict:
    """The record so far (written after each phase and each bundle's GPU steps: a run cut short keeps what it did)."""
    import torch

    for name, entry in jobs.items():
        entry |= builds.get(name, {})
        speeds = entry.get("speedups") or []
        entry["passed"] = all(entry.get(k) == 0 for k in ("export_rc", "build_rc", "test_rc", "bench_rc", "torch_build_rc", "pytest_rc"))
        entry["speedups_agree"] = bool(speeds) and all(s["agree"] for s in speeds)
    record = {
        "provenance": provenance(),
        "fake": fake,
        "cmake": cmake or "missing: built with build.sh (nvcc)",
        "torch": torch.__version__,
        "seconds": seconds,
        "variants": jobs,
        "all_passed": bool(jobs) and all(e.get("passed") for e in jobs.values()),
        "all_speedups_agree": bool(jobs) and all(e.get("speedups_agree") for e in jobs.values()),
    }
    (out / "device_export.json").write_text(json.dumps(record, indent=1, default=str) + "\n")
    return record


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    fake = "--fake" in sys.argv
    only = sys.argv[sys.argv.index("--only") + 1].split(",") if "--only" in sys.argv else [c.name for c in ej.CASES]
    out = Path(args[0] if args and args[0] not in only else os.environ.get("OUT", "device-export"))
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    cmake = shutil.which("cmake")
    seconds: dict[str, float] = {}
    url, jobs = evaluate_and_store(out, [c for c in ej.CASES if c.name in only], fake)
    seconds["evaluate"] = round(time.monotonic() - t0, 1)
    save(out, jobs, {}, seconds, cmake, fake)
    ok = {n: e for n, e in jobs.items() if "job" in e}
    with ThreadPoolExecutor(max_workers=len(ok) or 1) as pool:
        builds = dict(zip(ok, pool.map(lambda n: build(n, ok[n], url, out, cmake, fake), ok), strict=True))
    seconds["build"] = round(time.monotonic() - t0 - seconds["evaluate"], 1)
    record = save(out, jobs, builds, seconds, cmake, fake)
    for name, rec in builds.items():
        if not fake:
            run_gpu_steps(name, ok[name], rec, out, cmake)
        print(name, {k: v for k, v in rec.items() if k.endswith("_rc")}, flush=True)
        seconds["total"] = round(time.monotonic() - t0, 1)
        record = save(out, jobs, builds, seconds, cmake, fake)
    print(json.dumps({k: record[k] for k in ("cmake", "torch", "seconds", "all_passed", "all_speedups_agree")}))


if __name__ == "__main__":
    main()
