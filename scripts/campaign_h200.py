"""A campaign over every variant on this machine's GPU with a scripted model, its report and two figures.

    python scripts/campaign_h200.py --out DIR [--profile none|filtered|full] [--max-in-flight 2]
                                    [--category C | --variant TASK/PRECISION ...] [--fake-gpu]
    python scripts/campaign_h200.py --out DIR --candidates KERNELS [--fake-gpu] ...
    python scripts/campaign_h200.py --out DIR --figures-only

No network: the service runs in this process (uvicorn on a loopback port, SQLite under DIR), and the
model is a scripted OpenAI-compatible server on another loopback port. What the scripted model answers:

- planner: one fixed strategy;
- coder and debugger: the task's BASELINE source with its entry point renamed to the optimized one
  (`<op>` -> `<op>_optimized`), nothing else changed (the H200 run at 0792d46 also removed
  `fprintf(stderr, ...)` error prints, which candidates may use since c60584c). This is a known correct
  kernel, not an optimized one: P should be about 1. A baseline that still uses a symbol candidates may not use is rejected by the harness,
  and the report says so; that is a finding about the baseline, not a failure of the campaign.
- with `--candidates KERNELS` (a directory laid out as `bench run --candidates` reads it: `<op>.cu` /
  `<op>_bf16.cu`, or fp32/ and bf16/ subfolders, e.g. the seed's published optimized kernels): the coder
  and debugger answer with that directory's kernel for the job's variant, and the campaign covers the
  variants that have one (unless --variant/--category say otherwise). With R=1, D=0 every kernel the
  benchmark accepts must end as the job's correct kernel: the agent and the harness apply one rule.

Usage tokens are the prompt's and the reply's o200k_base token counts; they are priced at the made-up
prices in SCRIPTED_PRICES so the report's cost columns carry numbers.

Written to DIR: report.md, report.html, report.json (the campaign report), figures.json, overhead.svg
and suite_wall.svg (scripts/campaign_figures.py computes them). figures.json has, per job: wall time,
evaluation time, LLM time, the time its evaluations waited for the GPU (for the service's GPU pool, before
each call, and for the GPU's file lock, inside it; TimedEvaluator.gpu_wait gets both), and two overhead
figures, each as % of evaluation time: service overhead = wall - evaluation - GPU wait - LLM, and, from
the stored job events alone, the service time between evaluator calls (the time of the nodes that do not
call the evaluator, less LLM time, as % of evaluate + compile; see campaign_figures.EVENTS_NOTE); the
suite's wall time against the sum of its evaluation times; provenance. Targets (issue 17): service
overhead < 1 % of a job's evaluation time; suite wall time within 10 % of the sum of evaluation times.
Runs from before the GPU pool reported its waits (gpu_pool_wait_s 0 everywhere) count that queueing as
overhead in the first figure; the second one does not depend on it.

`--figures-only --out DIR` recomputes all of these from DIR's service.db, evaluator_seconds.json and
sittings.json without starting the service or the model: `provenance` is then the recompute's (command,
commit, date, with `recomputed`), and `run_provenance` the run's, from the earlier figures.json.

Longer than one sitting: `--stop-after S` stops the service cleanly after S seconds (running jobs
reach a checkpoint), and a later `--resume` with the same DIR continues the same campaign (the jobs
resume from their checkpoints; evaluation times and sittings are kept in DIR). The suite's wall time
is then the sum of the sittings, and a job that spans two sittings is left out of the overhead figures.

`--fake-gpu` swaps the GPU evaluation for gpu.fake.FakeGpuEvaluator (real nvcc compile, FAKE
timings): a CPU smoke test of this script, not a measurement.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from campaign_figures import GPU_TURN_WAIT, POOL_WAIT, write_figures  # noqa: E402

from bench_tasks import all_tasks  # noqa: E402
from bench_tasks.harness import EvaluationResult  # noqa: E402
from bench_tasks.provenance import provenance  # noqa: E402
from gpu.protocol import (  # noqa: E402
    CompileReport,
    CompileRequest,
    EvaluateRequest,
    Evaluator,
    KernelRequest,
    Profile,
    ProfileRequest,
    SanitizeRequest,
)
from tests.support.openai_stub import Reply, ScriptedOpenAI  # noqa: E402

MODELS = {"planner": "scripted-planner", "coder": "scripted-coder", "debugger": "scripted-coder", "compiler": "scripted-compiler"}
SCRIPTED_PRICES = {
    "scripted-planner": {"input": 1.0, "output": 4.0},
    "scripted-coder": {"input": 1.0, "output": 4.0},
    "scripted-compiler": {"input": 1.0, "output": 4.0},
}
PLAN = "Keep the baseline\nThe scripted model answers with the baseline's own kernel under the optimized entry point."


def known_correct_kernel(task: str, precision: str) -> str:
    """The baseline source with its entry renamed to the candidate's."""
    t = next(t for t in all_tasks() if t.name == task)
    v = t.variant(precision)
    return re.sub(rf"\b{re.escape(v.entry)}\b", v.candidate_entry, t.baseline_source())


def candidate_kernel(directory: Path, task: str, precision: str) -> str | None:
    """The kernel `directory` holds for a variant (bench run --candidates' layout), or None."""
    from bench_tasks.cli import _candidate_file

    path = _candidate_file(directory, task, precision)
    return path.read_text() if path is not None else None


def candidate_variants(directory: Path) -> list[str]:
    """TASK/PRECISION of every variant `directory` holds a kernel for."""
    return [f"{t.name}/{p}" for t in all_tasks() for p in t.prototypes if candidate_kernel(directory, t.name, p) is not None]


def _entries() -> dict[str, tuple[str, str]]:
    return {t.variant(p).candidate_entry: (t.name, p) for t in all_tasks() for p in t.prototypes}


class KnownKernelModel(ScriptedOpenAI):
    """The scripted model: each reply is computed from the request (see the module docstring)."""

    def __init__(self, candidates: Path | None = None) -> None:
        super().__init__({})
        self.candidates = candidates
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
        if self.candidates is not None:
            kernel = candidate_kernel(self.candidates, *found[0])
            if kernel is None:
                return f"no kernel for {'/'.join(found[0])} in {self.candidates}"
            return f"The candidate kernel.\n\n```cuda\n{kernel.rstrip()}\n```\n"
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
    and waiting for the GPU (kept in `path` after every call, so a later sitting adds to them)."""

    def __init__(self, inner: Evaluator, path: Path) -> None:
        self.inner, self.path = inner, path
        self.seconds: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
        if path.exists():
            for variant, parts in json.loads(path.read_text()).items():
                self.seconds[variant].update(parts)
        self._lock = threading.Lock()
        self._in_call = threading.local()  # whether this thread is inside one of our timed calls

    @contextmanager
    def _timed(self, kind: str, request: KernelRequest) -> Iterator[None]:
        started = time.monotonic()
        self._in_call.active = True
        try:
            yield
        finally:
            self._in_call.active = False
            self._add(request.task, request.precision, kind, time.monotonic() - started)

    def _add(self, task: str, precision: str, kind: str, seconds: float) -> None:
        with self._lock:
            self.seconds[f"{task}/{precision}"][kind] += seconds
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text(json.dumps(self.seconds))
            os.replace(tmp, self.path)

    def gpu_wait(self, task: str, precision: str, seconds: float) -> None:
        """A wait for the GPU (another job held it): inside an evaluate/profile (the GPU's file lock, already in
        that call's seconds) it is kept as GPU_TURN_WAIT; before one (the service's GPU pool) as POOL_WAIT."""
        self._add(task, precision, GPU_TURN_WAIT if getattr(self._in_call, "active", False) else POOL_WAIT, seconds)

    def compile(self, request: CompileRequest) -> CompileReport:
        with self._timed("compile", request):
            return self.inner.compile(request)

    def evaluate(self, request: EvaluateRequest) -> EvaluationResult:
        with self._timed("evaluate", request):
            return self.inner.evaluate(request)

    def profile(self, request: ProfileRequest) -> Profile:
        with self._timed("profile", request):
            return self.inner.profile(request)

    def sanitize(self, request: SanitizeRequest) -> list:
        with self._timed("sanitize", request):
            return self.inner.sanitize(request)


def _loopback_socket() -> socket.socket:
    """A loopback socket bound to a free port, handed to uvicorn as it is: no other process can take the port
    between choosing it and binding it (the campaign test runs beside other tests' servers)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    return sock


def gpu_label(fake_gpu: bool) -> str:
    return "FAKE (--fake-gpu: not a measurement)" if fake_gpu else "local GPU"


def figures_only(out: Path) -> dict[str, Any]:
    """--figures-only: the figures and reports again from DIR's files, neither the service nor the model started.
    The run's provenance (and GPU) come from DIR's figures.json when there is one; `provenance` is this command's."""
    if not (out / "service.db").exists():
        raise SystemExit(f"--figures-only: no campaign in {out} (no service.db)")
    earlier = json.loads((out / "figures.json").read_text()) if (out / "figures.json").exists() else {}
    head = {
        "provenance": {**provenance(), "recomputed": f"--figures-only from {out}: service.db, evaluator_seconds.json, sittings.json"},
        "run_provenance": earlier.get("run_provenance") or earlier.get("provenance"),
        "gpu": earlier.get("gpu", "unknown (no figures.json from the run)"),
    }
    return write_figures(out, head)


def run(args: argparse.Namespace) -> dict[str, Any]:
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    candidates = Path(args.candidates).resolve() if args.candidates else None
    if candidates is not None and not candidates.is_dir():
        raise SystemExit(f"--candidates: {candidates} is not a directory of kernels (<op>.cu / <op>_bf16.cu, or fp32/ and bf16/)")
    if candidates is not None and not args.variant and not args.category:
        args.variant = candidate_variants(candidates)
        if not args.variant:
            raise SystemExit(f"--candidates: {candidates} holds no kernel named after a task (<op>.cu / <op>_bf16.cu)")
    model = KnownKernelModel(candidates).start()
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
    from app.db.engine import make_engine, make_sessionmaker
    from app.db.migrate import upgrade
    from app.db.models import Campaign
    from app.main import create_app
    from settings import ServiceSettings

    if args.fake_gpu:
        from gpu.fake import FakeGpuEvaluator

        inner: Any = FakeGpuEvaluator()
    else:
        from gpu.local import LocalEvaluator

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
    sock = _loopback_socket()
    port = sock.getsockname()[1]
    settings = ServiceSettings(
        database_url=url,
        max_running_jobs=args.max_in_flight,
        poll_seconds=0.5,
        max_jobs_in_flight_per_key=max(8, args.max_in_flight),
        auto_migrate=False,
    )
    server = uvicorn.Server(uvicorn.Config(create_app(settings, evaluator=timed), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
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
        "name": f"candidate kernels from {candidates.name}" if candidates else "h200 known-correct kernels",
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
    engine.dispose()
    if stopped_early:
        return {"campaign": cid, "status": "running", "stopped_after_s": args.stop_after}
    head = {"provenance": provenance(), "gpu": gpu_label(args.fake_gpu)}
    if candidates is not None:
        head["candidates"] = str(candidates)  # the coder answered with these kernels, not the baselines
    figures = write_figures(out, head, cid)
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
    ap.add_argument(
        "--candidates", help="answer with this directory's kernels (<op>.cu / <op>_bf16.cu, or fp32/ and bf16/), not the baselines"
    )
    ap.add_argument("--stop-after", type=float, help="stop cleanly after this many seconds (continue with --resume)")
    ap.add_argument("--resume", action="store_true", help="continue the campaign in --out (after --stop-after or a crash)")
    ap.add_argument("--figures-only", action="store_true", help="only recompute the figures and reports from --out's files")
    args = ap.parse_args(argv)
    if args.figures_only:
        figures_only(Path(args.out).resolve())
        print(f"recomputed the figures in {args.out}", flush=True)
    else:
        run(args)


if __name__ == "__main__":
    main()
