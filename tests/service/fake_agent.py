"""A FAKE agent for the service tests: no LLM, no GPU, no LangGraph. It follows the graph.runner
contract (events, should_stop, outcomes) and keeps a durable checkpoint in a JSON file per job, so
restarts, cancels and manual answers can be tested against a real server process.

Like LangGraph after a crash, a resumed job re-runs the step that was in flight and re-sends that
step's events: the service must store them once.

Its FAKE model is "called" once per round through the service's LLM call ledger (`run.record_llm_call`),
like graph.llm does: the call is recorded `sent` before the request (a refused record means the job is
stopping: no request), the request is appended to the model's log (FAKE_AGENT_STATE_DIR/model-requests.jsonl,
what a real endpoint would bill), the answer takes FAKE_AGENT_STEP_SECONDS, then the call is reported paid.

Environment: FAKE_AGENT_STATE_DIR (checkpoint files), FAKE_AGENT_STEP_SECONDS (time per step),
FAKE_MODEL_HOLD (a path: while that file exists, the FAKE model holds every request without answering).
"""

from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path
from typing import Any

from app.agent import JobRun
from app.main import create_app


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


def fake_run_job(run: JobRun) -> dict[str, Any]:
    spec = run.spec
    state = _load(run.job_id)
    step_s = float(os.environ.get("FAKE_AGENT_STEP_SECONDS", "0.3"))
    rounds = int(spec.get("rounds", 3))
    if run.answer is not None and state.get("waiting"):
        state["answers"].append(run.answer)
        state["waiting"] = False
        _save(run.job_id, state)
    while state["step"] < rounds:
        if run.should_stop():
            return {"job_id": run.job_id, "status": "stopped", "message": "stopped at a step boundary", "attempts": [], "llm_calls": []}
        r = state["step"] + 1
        if spec.get("manual") and len(state["answers"]) < r:
            state["waiting"] = True
            _save(run.job_id, state)
            run.on_event(
                {
                    "type": "interrupt",
                    "job_id": run.job_id,
                    "round": r,
                    "node": "plan",
                    "question": f"round {r}: which strategy?",
                    "options": ["tiling", "vectorize"],
                }
            )
            return {
                "job_id": run.job_id,
                "status": "waiting_for_input",
                "message": f"round {r}: which strategy?",
                "attempts": [],
                "llm_calls": [],
            }
        run.on_event({"type": "node", "job_id": run.job_id, "round": r, "node": "coder"})
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
            return {"job_id": run.job_id, "status": "stopped", "message": "stopped before an LLM call", "attempts": [], "llm_calls": []}
        _model_request(run.job_id, call)
        hold = os.environ.get("FAKE_MODEL_HOLD")
        while hold and os.path.exists(hold):
            time.sleep(0.02)
        time.sleep(step_s)
        run.on_event(
            {
                "type": "llm_call",
                **call,
                "status": "paid",
                "input_tokens": 1000 * r,
                "output_tokens": 100 * r,
                "reasoning_tokens": 10,
                "cached_tokens": 5,
                "latency_s": 0.5,
                "cost_usd": 0.01 * r,
            }
        )
        strategy = state["answers"][r - 1] if spec.get("manual") else "fake strategy"
        run.on_event(
            {
                "type": "attempt",
                "job_id": run.job_id,
                "round": r,
                "node": "evaluate",
                "attempt_id": f"{run.job_id}-r{r}-d0",
                "debug_step": 0,
                "role": "coder",
                "strategy": strategy,
                "source": f"// fake kernel, round {r}\n",
                "flags": [],
                "compile_log": "",
                "verdict": "ok",
                "message": "",
                "evaluation": fake_evaluation(spec["task"], spec["precision"], r),
                "profile": {"bottleneck_class": "memory", "metrics": {"dram_pct": 80.0 + r}, "text": "filtered profile"},
            }
        )
        time.sleep(step_s)
        state["step"] = r
        _save(run.job_id, state)  # the checkpoint: this step is done
    run.on_event({"type": "finished", "job_id": run.job_id, "round": rounds, "node": "end"})
    return {
        "job_id": run.job_id,
        "status": "finished",
        "message": "fake agent finished",
        "attempts": [],
        "llm_calls": [],
        "best": None,
        "totals": {},
    }


def create_fake_app():
    """uvicorn factory: the real service with the FAKE agent (settings from the settings tree, app/config.py)."""
    return create_app(run_job=fake_run_job)
