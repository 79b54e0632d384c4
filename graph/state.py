"""The job's state in the graph. Everything in it is plain JSON-able data, checkpointed after every step:
the records are graph.contract models dumped with `model_dump(mode="json")` (spec: JobSpec, attempts:
Attempt, llm_calls: LlmCall, round_log: RoundSummary, profiles: ProfileEvent).

`attempts`, `llm_calls`, `round_log` and `profiles` only grow (reducer: list concatenation); a node
returns the records it adds. An attempt is one kernel source at (round, debug_step) with its final
verdict; it is written exactly once, by the node that decided that verdict (compile on a failure,
verify otherwise). Its profile, taken after it was verified, is a record of its own in `profiles`.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

GRAPH_VERSION = "2"  # 2: contract records, questions with ids, profiles, spending cap routing

# Agent-level verdicts, beside the harness's (ok, compile_error, link_error, rejected, runtime_error,
# timeout, wrong_answer).
NO_CODE = "no_code"  # the model's reply contained no kernel source
PROTOTYPE_CHANGED = "prototype_changed"  # the reply changed the entry point's parameters
BAD_SOURCE = "bad_source"  # empty, oversized or badly marked source (harness CandidateError)
# Not an attempt's verdict (the attempt stays `ok`, with its sanitizer verdicts): the failure the debugger is sent
# when compute-sanitizer found something in a correct kernel, which therefore cannot become the job's best.
SANITIZER_FINDINGS = "sanitizer_findings"


class JobState(TypedDict, total=False):
    job_id: str
    spec: dict[str, Any]  # JobSpec.model_dump(mode="json"); nodes read deps.spec
    graph_version: str
    choose_flags: bool

    round: int  # 1-based
    debug_step: int  # 0 for the coder's kernel, k for the k-th debugger fix in this round
    strategy: str
    source: str  # current kernel source (prepared text or the raw reply when unusable)
    flags: list[str]  # extra nvcc flags for this round
    compiled: bool
    compile_log: str
    reply: str  # the last coder/debugger reply, as sent (kept for no_code verdicts)
    failure: dict[str, Any] | None  # {verdict, message, log} of the current source, for the debugger

    baseline: dict[str, Any]  # {evaluation, profile, profile_note}
    profile: dict[str, Any]  # profile the planner sees: {of, text, note}
    best: dict[str, Any] | None  # the best correct attempt so far (by score P)
    current_profile: dict[str, Any] | None  # profile of this round's correct kernel

    attempts: Annotated[list[dict[str, Any]], operator.add]
    llm_calls: Annotated[list[dict[str, Any]], operator.add]
    round_log: Annotated[list[dict[str, Any]], operator.add]
    profiles: Annotated[list[dict[str, Any]], operator.add]

    status: str  # running | finished | no_correct_kernel
    stop_reason: str | None  # contract.StopReason: why the job ended before its rounds were done
    spending_refused: bool  # an LLM call was not sent: it could not fit in what the spending cap left
    message: str


def attempt_id(job_id: str, round_: int, debug_step: int) -> str:
    return f"{job_id}:r{round_}:d{debug_step}"


def best_of(best: dict | None, candidate: dict) -> dict:
    """The better of two attempts by score P (the earlier one wins ties)."""
    if best is None:
        return candidate
    return candidate if (candidate.get("score") or 0.0) > (best.get("score") or 0.0) else best
