"""A FAKE agent for the service tests: no LLM, no GPU, no LangGraph. It follows the graph.runner
contract (events, should_stop, outcomes: built as graph.contract models, so a change of the contract
fails these tests too) and keeps a durable checkpoint in a JSON file per job, so restarts, cancels
and manual answers can be tested against a real server process.

Like LangGraph after a crash, a resumed job re-runs the step that was in flight and re-sends that
step's events: the service must store them once.

Its FAKE model is "called" once per round through the service's LLM call ledger (`run.record_llm_call`),
like graph.llm does: the call is recorded `sent` before the request (a refused record means the job is
stopping: no request), the request is appended to the model's log (FAKE_AGENT_STATE_DIR/model-requests.jsonl,
what a real endpoint would bill), the answer takes FAKE_AGENT_STEP_SECONDS, then the call is reported paid.

Environment: FAKE_AGENT_STATE_DIR (checkpoint files), FAKE_AGENT_STEP_SECONDS (time per step),
FAKE_MODEL_HOLD (a path: while that file exists, the FAKE model holds every request without answering).
FAKE_AGENT_VARIED=1 (campaign tests: each variant gets its own made-up outcome, see `fake_variant`).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
import uuid
from pathlib import Path
from typing import Any

from app.agent import JobRun
from app.main import create_app
from bench_tasks import TaskError, load_task
from graph.contract import AttemptEvent, FinishedEvent, InterruptEvent, LlmCallEvent, NodeEvent, Outcome, Profile, Question


def _state_path(job_id: str) -> Path:
    root = Path(os.environ.get("FAKE_AGENT_STATE_DIR", "/tmp/fake-agent"))
    root.mkdir(parents=True, exist_ok=True)
    return root / f"{job_id}.json"


def _load(job_id: str) -> dict[str, Any]:
    path = _state_path(job_id)
    return json.loads(path.read_text()) if path.exists() else {"step": 0, "answers": []}


def model_log(state_dir: Path) -> list[dict[str, Any]]:
    """Every request the FAKE model received, in order (a line is written before the answer is awaited)."""
    path = state_dir / "model-requests.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def _model_request(job_id: str, call: dict[str, Any]) -> None:
    with open(_state_path(job_id).parent / "model-requests.jsonl", "a") as f:
        f.write(json.dumps({"job_id": job_id, "call_id": call["call_id"], "send_id": call["send_id"], "at_ns": time.time_ns()}) + "\n")
        f.flush()
        os.fsync(f.fileno())


def _save(job_id: str, state: dict[str, Any]) -> None:
    path = _state_path(job_id)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(state))
    os.replace(tmp, path)


def fake_evaluation(task: str, precision: str, round_no: int) -> dict[str, Any]:
    """An EvaluationResult-shaped document (bench_tasks/harness/result.py) with made-up timings."""
    rows = []
    for i, n in enumerate((1024, 65536)):
        base, cand = 10.0 * (i + 1), 10.0 * (i + 1) / (1.0 + round_no)
        rows.append(
            {
                "params": {"N": n},
                "complexity": n,
                "passed": True,
                "baseline": {"median_us": base, "iqr_us": 0.1, "min_us": base, "samples": 20, "wall_median_us": base},
                "candidate": {"median_us": cand, "iqr_us": 0.05, "min_us": cand, "samples": 20, "wall_median_us": cand},
                "speedup": base / cand,
                "speedup_iqr": 0.01,
                "roofline_floor_us": 1.0,
                "candidate_roofline_pct": 100.0 / cand,
                # as the harness reports them: timed pairs checked (the review rule flags a timed row without one)
                "checks": [{"impl": "candidate", "seed": 1, "stage": "timed_call", "call": c, "passed": True} for c in (0, 1)],
            }
        )
    return {
        "schema_version": "1.0",
        "task": task,
        "precision": precision,
        "verdict": "ok",
        "rows": rows,
        "score": 1.0 + round_no,
        "message": "fake evaluation",
    }


CLASSES = ("memory_latency", "memory_bandwidth", "compute")
BASE_P = (0.6, 0.9, 1.3, 2.5, 5.0, 12.0, 40.0)


def fake_variant(task: str, precision: str) -> dict[str, Any]:
    """A made-up but fixed outcome per variant (from a hash of its name), so a campaign's numbers vary:
    no correct kernel for 1 in 10; a P per round of base * round; a compile error fixed by the debugger
    in each round for 1 in 4; a verdict flag for 1 in 5; baseline and best-kernel classes."""
    h = int(hashlib.sha256(f"{task}/{precision}".encode()).hexdigest()[:12], 16)
    return {
        "correct": h % 10 != 0,
        "base_p": BASE_P[(h // 10) % len(BASE_P)],
        "debug": h % 4 == 1,
        "flags": ["launch_bound"] if h % 5 == 2 else [],
        "baseline_class": CLASSES[h % 3],
        "best_class": CLASSES[(h // 3) % 3],
        "profile_tokens": 100 + h % 50,
    }


def _varied_attempts(run: JobRun, r: int, v: dict[str, Any]) -> list[dict[str, Any]]:
    spec = run.spec
    base = {
        "job_id": run.job_id,
        "round": r,
        "node": "verify",
        "strategy": f"fake strategy {r}",
        "flags": [],
        "compile_log": "",
        "message": "",
    }
    out = []
    if v["debug"]:
        out.append(
            base
            | {
                "attempt_id": f"{run.job_id}:r{r}:d0",
                "debug_step": 0,
                "role": "coder",
                "source": "// fake, broken\n",
                "verdict": "compile_error",
                "evaluation": None,
            }
        )
    evaluation = fake_evaluation(spec.task, spec.precision, r)
    if v["correct"]:
        evaluation["score"] = v["base_p"] * r
        for row in evaluation["rows"]:
            row["flags"] = list(v["flags"])
        verdict = "ok"
    else:
        evaluation.update(verdict="wrong_answer", score=None, message="FAKE mismatch")
        verdict = "wrong_answer"
    step = 1 if v["debug"] else 0
    out.append(
        base
        | {
            "attempt_id": f"{run.job_id}:r{r}:d{step}",
            "debug_step": step,
            "role": "debugger" if step else "coder",
            "source": f"// fake kernel, round {r}\n",
            "verdict": verdict,
            "evaluation": evaluation,
        }
    )
    return out


def fake_varied_run_job(run: JobRun) -> dict[str, Any]:
    """The campaign flavour: the events the real graph sends (profile events with bottleneck classes and
    tokens, planner calls with profile_tokens), outcomes from `fake_variant`."""
    spec = run.spec
    state = _load(run.job_id)
    step_s = float(os.environ.get("FAKE_AGENT_STEP_SECONDS", "0"))
    v = fake_variant(spec.task, spec.precision)
    mode = spec.profile_mode
    tokens = 0 if mode == "none" else v["profile_tokens"] * (8 if mode == "full" else 1)
    if state["step"] == 0 and not state.get("baseline"):
        run.on_event(
            {
                "type": "profile",
                "job_id": run.job_id,
                "of": "baseline",
                "sent": True,
                "mode": mode,
                "tokens": tokens,
                "bottleneck_class": "" if mode == "none" else v["baseline_class"],
                "text": "FAKE baseline profile",
            }
        )
        state["baseline"] = True
        _save(run.job_id, state)
    while state["step"] < spec.rounds:
        if run.should_stop():
            return {"job_id": run.job_id, "status": "stopped", "message": "stopped at a step boundary", "attempts": [], "llm_calls": []}
        r = state["step"] + 1
        run.on_event(
            {
                "type": "llm_call",
                "job_id": run.job_id,
                "round": r,
                "node": "plan",
                "call_id": f"{run.job_id}-r{r}-planner",
                "role": "planner",
                "model": "fake-planner",
                "input_tokens": 500 + tokens,
                "output_tokens": 50,
                "reasoning_tokens": 0,
                "cached_tokens": 0,
                "latency_s": 0.1,
                "cost_usd": 0.002 * r,
                "profile_mode": mode,
                "profile_tokens": tokens,
            }
        )
        run.on_event(
            {
                "type": "llm_call",
                "job_id": run.job_id,
                "round": r,
                "node": "code",
                "call_id": f"{run.job_id}-r{r}-coder",
                "role": "coder",
                "model": "fake-coder",
                "input_tokens": 1000,
                "output_tokens": 300 * r,
                "reasoning_tokens": 0,
                "cached_tokens": 0,
                "latency_s": 0.2,
                "cost_usd": 0.01 * r,
            }
        )
        time.sleep(step_s)
        for attempt in _varied_attempts(run, r, v):
            run.on_event({"type": "attempt", **attempt})
            if attempt["verdict"] == "ok" and mode != "none":
                run.on_event(
                    {
                        "type": "profile",
                        "job_id": run.job_id,
                        "of": attempt["attempt_id"],
                        "attempt_id": attempt["attempt_id"],
                        "sent": False,
                        "bottleneck_class": v["best_class"],
                        "text": "FAKE kernel profile",
                    }
                )
        state["step"] = r
        _save(run.job_id, state)  # the checkpoint: this step is done
    status = "finished" if v["correct"] else "no_correct_kernel"
    run.on_event({"type": "finished", "job_id": run.job_id, "round": state["step"], "node": "end", "status": status})
    return {"job_id": run.job_id, "status": status, "message": f"fake agent {status}", "attempts": [], "llm_calls": []}


def fake_run_job(run: JobRun) -> Outcome | dict[str, Any]:
    try:  # as the graph does (start_job checks it, a resumed job's nodes load it): an unknown task fails the job
        load_task(run.spec.task)
    except TaskError as exc:
        run.on_event(FinishedEvent(job_id=run.job_id, status="failed", message=str(exc)))
        return Outcome(job_id=run.job_id, status="failed", message=str(exc))
    if os.environ.get("FAKE_AGENT_VARIED") == "1":
        return fake_varied_run_job(run)
    spec = run.spec
    state = _load(run.job_id)
    step_s = float(os.environ.get("FAKE_AGENT_STEP_SECONDS", "0.3"))
    if run.answer is not None and state.get("waiting") and run.answer.question_id == state.get("question_id"):
        state["answers"].append(run.answer.text)
        state["waiting"] = False
        _save(run.job_id, state)
    while state["step"] < spec.rounds:
        if run.should_stop():
            return Outcome(job_id=run.job_id, status="stopped", message="stopped at a step boundary")
        r = state["step"] + 1
        if spec.manual and len(state["answers"]) < r:
            question = Question(
                question_id=f"{run.job_id}-r{r}-planner",
                role="planner",
                round=r,
                question=f"round {r}: which strategy? (tiling or vectorize)",
                prompt="FAKE planner prompt",
            )
            state["waiting"], state["question_id"] = True, question.question_id
            _save(run.job_id, state)
            run.on_event(InterruptEvent(job_id=run.job_id, round=r, node="plan", question=question))
            return Outcome(job_id=run.job_id, status="waiting_for_input", message=question.question, question=question)
        run.on_event(NodeEvent(job_id=run.job_id, round=r, node="coder"))
        call = {
            "job_id": run.job_id,
            "round": r,
            "node": "coder",
            "call_id": f"{run.job_id}-r{r}-coder",
            "send_id": uuid.uuid4().hex,
            "role": "coder",
            "model": "fake-model",
        }
        if not run.record_llm_call({**call, "status": "sent", "input_tokens": 900 * r, "cost_usd": 0.005 * r}):
            return Outcome(job_id=run.job_id, status="stopped", message="stopped before an LLM call")
        _model_request(run.job_id, call)
        hold = os.environ.get("FAKE_MODEL_HOLD")
        while hold and os.path.exists(hold):
            time.sleep(0.02)
        time.sleep(step_s)
        run.on_event(
            LlmCallEvent(
                **call,
                status="paid",
                input_tokens=1000 * r,
                output_tokens=100 * r,
                reasoning_tokens=10,
                cached_tokens=5,
                latency_s=0.5,
                cost_usd=0.01 * r,
            )
        )
        strategy = state["answers"][r - 1] if spec.manual else "fake strategy"
        evaluation = fake_evaluation(spec.task, spec.precision, r)
        run.on_event(
            AttemptEvent(
                job_id=run.job_id,
                round=r,
                node="evaluate",
                attempt_id=f"{run.job_id}-r{r}-d0",
                debug_step=0,
                role="coder",
                strategy=strategy,
                source=f"// fake kernel, round {r}\n",
                verdict="ok",
                score=evaluation["score"],
                evaluation=evaluation,
                profile=Profile(
                    bottleneck_class="memory_bandwidth", metrics={"dram_pct": 80.0 + r}, text="FAKE filtered profile", tokens=4
                ),
            )
        )
        time.sleep(step_s)
        state["step"] = r
        _save(run.job_id, state)  # the checkpoint: this step is done
    run.on_event(FinishedEvent(job_id=run.job_id, round=spec.rounds, node="end", status="finished"))
    return Outcome(job_id=run.job_id, status="finished", message="fake agent finished")


def create_fake_app():
    """uvicorn factory: the real service with the FAKE agent (settings from the settings tree, settings/tree.py)."""
    return create_app(run_job=fake_run_job)
