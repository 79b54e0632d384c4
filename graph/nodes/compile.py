"""Compile (deterministic, CPU): reject replies without code or with a changed prototype, then nvcc
with the harness's prototype and symbol checks. A failure ends the attempt here."""

from __future__ import annotations

from typing import Any

from bench_tasks.harness import CandidateError
from bench_tasks.harness import source as harness_source
from settings import get_harness_settings

from ..deps import Deps
from ..kernel_text import check_prototype
from ..state import BAD_SOURCE, NO_CODE, PROTOTYPE_CHANGED
from .records import attempt


def run(state: dict[str, Any], deps: Deps) -> dict[str, Any]:
    variant = deps.variant
    source = state.get("source") or ""
    verdict, message, log = None, "", ""
    if not source.strip():
        who = "coder" if state.get("debug_step", 0) == 0 else "debugger"
        verdict = NO_CODE
        message = f"the {who}'s reply contained no kernel source (expected one ```cuda block defining {variant.candidate_entry})"
        log = (state.get("reply") or "")[:4000]
    else:
        try:
            source = harness_source.prepare(source, get_harness_settings().max_source_bytes)
        except CandidateError as exc:
            verdict, message = BAD_SOURCE, str(exc)
        if verdict is None:
            proto = check_prototype(source, variant)
            if proto.changed:
                verdict, message = PROTOTYPE_CHANGED, proto.message
        if verdict is None:
            report = deps.evaluator.compile(deps.compile_request(source, state.get("flags", [])))
            verdict, message, log = report.verdict, report.message, report.log
    if verdict is None:
        return {"source": source, "compiled": True, "failure": None, "compile_log": log}
    failure = {"verdict": verdict, "message": message, "log": log[-8000:]}
    record = attempt({**state, "source": source}, verdict, message, log, None)
    return {"source": source, "compiled": False, "failure": failure, "compile_log": log, "attempts": [record]}
