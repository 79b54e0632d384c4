"""A campaign over every variant on this machine's GPU with a scripted model, its report and two figures.

    python scripts/campaign_h200.py --out DIR [--profile none|filtered|full] [--max-in-flight 2]
                                    [--category C | --variant TASK/PRECISION ...] [--fake-gpu]

No network: the service runs in this process (uvicorn on a loopback port, SQLite under DIR), and the
model is a scripted OpenAI-compatible server on another loopback port. What the scripted model answers:

- planner: one fixed strategy;
- coder and debugger: the task's BASELINE source with its entry point renamed to the optimized one
  (`<op>` -> `<op>_optimized`), and `fprintf(stderr, ...)` error prints removed (the candidate's host
  symbol allowlist forbids libc I/O). This is a known correct kernel, not an optimized one: P should
  be about 1. A baseline that still uses a symbol candidates may not use is rejected by the harness,
  and the report says so; that is a finding about the baseline, not a failure of the campaign.

Usage tokens are the prompt's and the reply's o200k_base token counts; they are priced at the made-up
prices in SCRIPTED_PRICES so the report's cost columns carry numbers.

Written to DIR: report.md, report.html, report.json (the campaign report), figures.json (per job:
wall time, evaluation time, LLM time, the time its evaluations waited for another job's GPU turn, service
overhead = wall - evaluation - GPU wait - LLM; the suite's wall time against the sum of its
evaluation times; provenance), overhead.svg and suite_wall.svg. Targets (issue 17): service overhead
< 1 % of a job's evaluation time; suite wall time within 10 % of the sum of evaluation times.

Longer than one sitting: `--stop-after S` stops the service cleanly after S seconds (running jobs
reach a checkpoint), and a later `--resume` with the same DIR continues the same campaign (the jobs
resume from their checkpoints; evaluation times and sittings are kept in DIR). The suite's wall time
is then the sum of the sittings, and a job that spans two sittings is left out of the overhead figure.

`--fake-gpu` swaps the GPU evaluation for graph.testing.FakeGpuEvaluator (real nvcc compile, FAKE
timings): a CPU smoke test of this script, not a measurement.
"""

from __future__ import annotations

import argparse
import html
import json
import os
import re
import shutil
import socket
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench_tasks import all_tasks  # noqa: E402
from bench_tasks.provenance import provenance  # noqa: E402
from tests.support.openai_stub import Reply, ScriptedOpenAI  # noqa: E402

MODELS = {"planner": "scripted-planner", "coder": "scripted-coder", "debugger": "scripted-coder", "compiler": "scripted-compiler"}
SCRIPTED_PRICES = {
    "scripted-planner": {"input": 1.0, "output": 4.0},
    "scripted-coder": {"input": 1.0, "output": 4.0},
    "scripted-compiler": {"input": 1.0, "output": 4.0},
}
PLAN = "Keep the baseline\nThe scripted model answers with the baseline's own kernel under the optimized entry point."
_FPRINTF = re.compile(r"(?:\bstd::)?\bfprintf\s*\(\s*stderr\b[^;]*;", re.S)


def known_correct_kernel(task: str, precision: str) -> str:
    """The baseline source with its entry renamed to the candidate's and stderr prints removed."""
    t = next(t for t in all_tasks() if t.name == task)
    v = t.variant(precision)
    source = _FPRINTF.sub("/* error print removed by the scripted model */;", t.baseline_source())
    return re.sub(rf"\b{re.escape(v.entry)}\b", v.candidate_entry, source)


def _entries() -> dict[str, tuple[str, str]]:
    return {t.variant(p).candidate_entry: (t.name, p) for t in all_tasks() for p in t.prototypes}


class KnownKernelModel(ScriptedOpenAI):
    """The scripted model: each reply is computed from the request (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__({})
        self._entries = _entries()
        self._order = threading.Lock()

    def reply_for(self, body: dict[str, Any]) -> str:
        prompt = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
        if body.get("model") == MODELS["planner"]:
            return PLAN
        if body.get("model") == MODELS["compiler"]:
            return '{"flags": []}'
        found = [self._entries[name] for name in re.findall(r"\b(\w+_optimized)\b", prompt) if name in self._entries]
        if not found:
            return "no entry point found in the prompt"
        return f"The known correct kernel.\n\n```cuda\n{known_correct_kernel(*found[0])}```\n"

    def _answer(self, path: str, headers: dict[str, str], body: dict[str, Any]) -> tuple[int, dict[str, Any], float]:
        from profiling.tokens import count_tokens

        text = self.reply_for(body)
        prompt = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
        with self._order:  # the reply queued here is the one this request takes
            self.add(
                str(body.get("model", "")),
                Reply(text, prompt_tokens=count_tokens(prompt).tokens, completion_tokens=count_tokens(text).tokens),
            )
            return super()._answer(path, headers, body)


class TimedEvaluator:
    """Wraps the evaluator and adds up, per variant, the seconds spent compiling, evaluating, profiling
    (kept in `path` after every call, so a later sitting adds to them)."""

    def __init__(self, inner: Any, path: Path) -> None:
        self.inner, self.path = inner, path
        self.seconds: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
        if path.exists():
            for variant, parts in json.loads(path.read_text()).items():
                self.seconds[variant].update(parts)
        self._lock = threading.Lock()

    def _timed(self, kind: str, task: str, precision: str, fn, *args: Any) -> Any:
        started = time.monotonic()
        try:
            return fn(task, precision, *args)
        finally:
            self._add(task, precision, kind, time.monotonic() - started)

    def _add(self, task: str, precision: str, kind: str, seconds: float) -> None:
        with self._lock:
            self.seconds[f"{task}/{precision}"][kind] += seconds
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text(json.dumps(self.seconds))
            os.replace(tmp, self.path)

    def gpu_wait(self, task: str, precision: str, seconds: float) -> None:
        """The part of an evaluate/profile spent waiting for the GPU's turn (another job held it)."""
        self._add(task, precision, "gpu_wait", seconds)

    def compile(self, task: str, precision: str, *args: Any) -> Any:
        return self._timed("compile", task, precision, self.inner.compile, *args)

    def evaluate(self, task: str, precision: str, *args: Any) -> Any:
        return self._timed("evaluate", task, precision, self.inner.evaluate, *args)

    def profile(self, task: str, precision: str, *args: Any) -> Any:
        return self._timed("profile", task, precision, self.inner.profile, *args)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _svg_bars(title: str, labels: list[str], values: list[float], unit: str, target: float | None, target_label: str) -> str:
    w, bar, top, h = max(480, 14 * len(values) + 80), 10, 30, 220
    peak = max([*values, target or 0.0, 1e-9])
    esc = html.escape
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h + 90}">',
        f'<text x="10" y="18" font-size="13">{esc(title)}</text>',
    ]
    for i, (label, v) in enumerate(zip(labels, values)):
        bh = h * v / peak
        x = 50 + i * (bar + 4)
        parts.append(
            f'<rect x="{x}" y="{top + h - bh:.1f}" width="{bar}" height="{bh:.1f}" fill="#2f6fde">'
            f"<title>{esc(label)}: {v:.4g} {esc(unit)}</title></rect>"
        )
    if target is not None:
        y = top + h - h * target / peak
        parts.append(
            f'<line x1="45" x2="{w - 10}" y1="{y:.1f}" y2="{y:.1f}" stroke="#d9822b" stroke-dasharray="4 3"/>'
            f'<text x="{w - 10}" y="{y - 4:.1f}" font-size="11" text-anchor="end">{esc(target_label)}</text>'
        )
    parts.append(f'<text x="10" y="{top + h + 20}" font-size="11">{len(values)} bars; max {peak:.4g} {esc(unit)}</text></svg>')
    return "".join(parts)


def run(args: argparse.Namespace) -> dict[str, Any]:
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    model = KnownKernelModel().start()
    db = out / "service.db"
    sittings_file = out / "sittings.json"
    if not args.resume:
        for stale in (db, out / "evaluator_seconds.json", sittings_file):
            stale.unlink(missing_ok=True)
        shutil.rmtree(out / "state", ignore_errors=True)  # the jobs' checkpoints and caches
    elif not db.exists():
        raise SystemExit(f"--resume: no campaign in {out} (no service.db); run without --resume first")
    sittings = json.loads(sittings_file.read_text()) if sittings_file.exists() else []
    sitting_start = time.time()
    os.environ.update(
        {
            "CUDAMASTER_AGENT__BASE_URL": model.base_url,
            "CUDAMASTER_AGENT__API_KEY": "scripted",
            "CUDAMASTER_AGENT__STATE_DIR": str(out / "state"),
            "CUDAMASTER_AGENT__PRICES": json.dumps(SCRIPTED_PRICES),
        }
    )
    import httpx
    import uvicorn

    from app.auth import create_key
    from app.campaigns import report as campaign_report
    from app.db.engine import make_engine, make_sessionmaker
    from app.db.migrate import upgrade
    from app.db.models import Campaign, Job
    from app.main import create_app
    from app.settings import ServiceSettings

    if args.fake_gpu:
        from graph.testing import FakeGpuEvaluator

        inner: Any = FakeGpuEvaluator()
    else:
        from graph.evaluator import LocalEvaluator

        inner = LocalEvaluator()
    timed = TimedEvaluator(inner, out / "evaluator_seconds.json")
    if hasattr(inner, "on_gpu_wait"):
        inner.on_gpu_wait = timed.gpu_wait
    url = f"sqlite:///{db}"
    upgrade(url)
    engine = make_engine(url)
    sessions = make_sessionmaker(engine)
    with sessions() as session:
        key = create_key(session, "campaign_h200", role="admin")[1]
        earlier = session.query(Campaign).order_by(Campaign.created_at.desc()).first() if args.resume else None
    port = _free_port()
    settings = ServiceSettings(
        database_url=url,
        max_running_jobs=args.max_in_flight,
        poll_seconds=0.5,
        max_jobs_in_flight_per_key=max(8, args.max_in_flight),
        auto_migrate=False,
    )
    server = uvicorn.Server(uvicorn.Config(create_app(settings, evaluator=timed), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{port}/api/v1"
    headers = {"Authorization": f"Bearer {key}"}
    client = httpx.Client(timeout=60)
    deadline = time.monotonic() + 120
    while True:
        try:
            health = client.get(f"{base}/health").json()
            break
        except httpx.HTTPError:
            if time.monotonic() > deadline:
                raise SystemExit("the service did not start within 120 s") from None
            time.sleep(0.2)
    if not health.get("can_run_jobs"):
        raise SystemExit(f"the service cannot run jobs here: {health.get('gpu_note')}")
    selection: dict[str, Any] = {"variants": args.variant} if args.variant else ({"category": args.category} if args.category else {})
    body = {
        "name": "h200 known-correct kernels",
        "selection": selection,
        "max_in_flight": args.max_in_flight,
        "config": {"rounds": 1, "debug": 0, "profile_mode": args.profile, "models": MODELS, "sizes": args.sizes},
    }
    if earlier is not None:
        cid = earlier.id  # running: the scheduler continues it; ended: only the report is written
        print(f"campaign {cid} resumed ({earlier.status})", flush=True)
    else:
        r = client.post(f"{base}/campaigns", json=body, headers=headers)
        if r.status_code != 201:
            raise SystemExit(f"POST /campaigns: {r.status_code} {r.text}")
        cid = r.json()["id"]
        print(f"campaign {cid}: {r.json()['progress']['variants']} variants", flush=True)
    stopped_early = False
    while True:
        c = client.get(f"{base}/campaigns/{cid}", headers=headers).json()
        p = c["progress"]
        print(
            f"  {c['status']}: {p['finished'] + p['no_correct_kernel'] + p['failed'] + p['cancelled']}/{p['variants']} ended, "
            f"{p['correct']} correct",
            flush=True,
        )
        if c["status"] != "running":
            break
        if args.stop_after is not None and time.time() - sitting_start > args.stop_after:
            stopped_early = True
            print(f"stopping after {args.stop_after:g} s; continue with --resume --out {out}", flush=True)
            break
        time.sleep(args.poll)
    server.should_exit = True  # the runner drains running jobs to a checkpoint and releases them
    thread.join(settings.drain_seconds + 60)
    model.stop()
    sittings.append({"start": sitting_start, "end": time.time()})
    sittings_file.write_text(json.dumps(sittings))
    if stopped_early:
        engine.dispose()
        return {"campaign": cid, "status": "running", "stopped_after_s": args.stop_after}

    with sessions() as session:
        summary = campaign_report.summarize(session, cid)
        campaign = session.get(Campaign, cid)
        jobs = [(v, session.get(Job, v.job_id)) for v in campaign.variants if v.job_id] if campaign else []
        rows = []
        for v, job in jobs:
            spent = dict(timed.seconds.get(f"{v.task}/{v.precision}", {}))
            gpu_wait_s = spent.pop("gpu_wait", 0.0)  # inside evaluate/profile, but waiting for another job's GPU turn
            evaluation_s = sum(spent.values()) - gpu_wait_s
            wall_s = (job.finished_at - job.started_at).total_seconds() if job.finished_at and job.started_at else None
            one_sitting = wall_s is not None and any(
                s["start"] <= job.started_at.timestamp() and job.finished_at.timestamp() <= s["end"] for s in sittings
            )
            overhead = wall_s - evaluation_s - gpu_wait_s - job.llm_latency_s if one_sitting else None
            rows.append(
                {
                    "variant": f"{v.task}/{v.precision}",
                    "status": job.status,
                    "best_p": job.best_score,
                    "wall_s": wall_s,
                    "evaluation_s": evaluation_s,
                    "evaluation_parts_s": dict(spent),
                    "gpu_wait_s": gpu_wait_s,
                    "llm_s": job.llm_latency_s,
                    "overhead_s": overhead,
                    "overhead_pct_of_evaluation": 100 * overhead / evaluation_s if overhead is not None and evaluation_s else None,
                    "one_sitting": one_sitting,
                    "message": job.message[:300],
                }
            )
        suite_wall = (
            sum(s["end"] - s["start"] for s in sittings)
            if len(sittings) > 1
            else ((campaign.finished_at - campaign.created_at).total_seconds() if campaign and campaign.finished_at else None)
        )
    engine.dispose()
    sum_eval = sum(r["evaluation_s"] for r in rows)
    overheads = sorted(r["overhead_pct_of_evaluation"] for r in rows if r["overhead_pct_of_evaluation"] is not None)
    figures = {
        "provenance": provenance(),
        "gpu": "FAKE (--fake-gpu: not a measurement)" if args.fake_gpu else "local GPU",
        "campaign": cid,
        "status": summary.status,
        "variants": summary.n,
        "correct": sum(v.correct for v in summary.lines),
        "scripted_model": "coder answers the baseline source renamed to the optimized entry point (known correct, not optimized)",
        "jobs": rows,
        "overhead_pct_of_evaluation": {
            "median": overheads[len(overheads) // 2] if overheads else None,
            "max": overheads[-1] if overheads else None,
            "target_pct": 1.0,
        },
        "suite": {
            "wall_s": suite_wall,
            "sum_of_evaluations_s": sum_eval,
            "wall_over_sum_pct": 100 * (suite_wall / sum_eval - 1) if suite_wall and sum_eval else None,
            "target_pct": 10.0,
            "max_in_flight": args.max_in_flight,
            "sittings": len(sittings),
            "note": "wall time: the sum of the sittings' times (service start-up included)"
            if len(sittings) > 1
            else "wall time: campaign created -> finished",
        },
    }
    (out / "figures.json").write_text(json.dumps(figures, indent=1, default=str))
    (out / "report.md").write_text(campaign_report.to_markdown([summary]))
    (out / "report.html").write_text(campaign_report.to_html([summary]))
    (out / "report.json").write_text(json.dumps({"campaigns": [summary.to_dict()]}, indent=1, default=str))
    ordered = sorted((r for r in rows if r["overhead_pct_of_evaluation"] is not None), key=lambda r: r["overhead_pct_of_evaluation"])
    (out / "overhead.svg").write_text(
        _svg_bars(
            "Service overhead per job, % of its evaluation time",
            [r["variant"] for r in ordered],
            [r["overhead_pct_of_evaluation"] for r in ordered],
            "%",
            1.0,
            "target 1 %",
        )
    )
    (out / "suite_wall.svg").write_text(
        _svg_bars(
            "Whole-suite wall time vs the sum of its evaluation times",
            ["sum of evaluations", "campaign wall time"],
            [sum_eval, suite_wall or 0.0],
            "s",
            1.1 * sum_eval,
            "sum + 10 %",
        )
    )
    print(f"wrote {out}: report.md, report.html, report.json, figures.json, overhead.svg, suite_wall.svg", flush=True)
    return figures


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="output directory")
    ap.add_argument("--profile", default="none", choices=("none", "filtered", "full"), help="profile mode (ncu adds ~3 s a profile)")
    ap.add_argument("--sizes", default="paper", choices=("paper", "large", "edge", "all"))
    ap.add_argument("--max-in-flight", type=int, default=2, help="jobs at once (GPU work is one at a time per GPU)")
    ap.add_argument("--category", help="only this category")
    ap.add_argument("--variant", action="append", help="TASK/PRECISION (repeat); default every variant")
    ap.add_argument("--poll", type=float, default=5.0, help="seconds between progress lines")
    ap.add_argument("--fake-gpu", action="store_true", help="FAKE GPU results (CPU smoke test of this script)")
    ap.add_argument("--stop-after", type=float, help="stop cleanly after this many seconds (continue with --resume)")
    ap.add_argument("--resume", action="store_true", help="continue the campaign in --out (after --stop-after or a crash)")
    run(ap.parse_args(argv))


if __name__ == "__main__":
    main()
