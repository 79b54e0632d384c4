"""Verify (GPU): check and time the compiled kernel against the baseline; decides the attempt's verdict.

A correct kernel is then put through compute-sanitizer when the job's `sanitize` asks (`best`: when it would become the
job's best; `every`: always). A kernel with findings keeps its `ok` verdict and its measurements, carries the findings,
never becomes the best, and goes to the debugger with them as a compile error would. A kernel the sanitizer could not
check (`not_run`: no tool, a GPU runtime that refuses it) may become the best and says so."""

from __future__ import annotations

from typing import Any

from bench_tasks.harness.result import SanitizerStatus, sanitizer_findings_text, sanitizer_status

from ..deps import Deps
from ..state import SANITIZER_FINDINGS, best_of
from .records import attempt


def _sanitized(state: dict[str, Any], deps: Deps, record: dict[str, Any]) -> list[dict[str, Any]]:
    """The sanitizer's verdicts on the kernel when the job's mode asks for them, else []."""
    mode = deps.spec.sanitize
    if mode == "off" or (mode == "best" and best_of(state.get("best"), record) is not record):
        return []
    return [v.model_dump(mode="json") for v in deps.evaluator.sanitize(deps.sanitize_request(state["source"]))]


def run(state: dict[str, Any], deps: Deps) -> dict[str, Any]:
    result = deps.evaluator.evaluate(deps.evaluate_request(state["source"], state.get("flags", [])))
    evaluation = result.model_dump(mode="json")
    record = attempt(state, result.verdict.value, result.message, state.get("compile_log", ""), evaluation)
    update: dict[str, Any] = {"attempts": [record]}
    if not result.ok:
        update["failure"] = {"verdict": result.verdict.value, "message": result.message, "log": result.log[-8000:]}
        return update
    record["sanitizer"] = _sanitized(state, deps, record)
    if sanitizer_status(record["sanitizer"]) == SanitizerStatus.findings:
        tools = ", ".join(v["tool"] for v in record["sanitizer"] if v["status"] == SanitizerStatus.findings)
        message = f"correct, but compute-sanitizer reported errors ({tools}): fix them; the kernel cannot be the result until it is clean"
        update["failure"] = {"verdict": SANITIZER_FINDINGS, "message": message, "log": sanitizer_findings_text(record["sanitizer"])[-8000:]}
        return update
    update["best"] = best_of(state.get("best"), record)
    update["failure"] = None
    return update
