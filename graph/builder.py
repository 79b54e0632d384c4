"""The job's graph:

    START -> baseline -> plan -> code -> [flags] -> compile -> verify -> profile -> filter -> round_end
                                             ^          |          |                            |
                                             |     fail v     fail v                            v
                                             +------- debug (at most D per round)      plan | finish -> END

A compile or verify failure goes to the debugger while the round has debug tries left, else the
round ends with the failure recorded. The next round starts from the best kernel so far.
"""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.types import RetryPolicy

from bench_tasks.harness import Verdict

from .deps import Deps, spec_of
from .llm import is_transient
from .nodes import baseline, code, compile, debug, filter, finish, flags, plan, profile, round_end, verify
from .state import JobState

LLM_NODES = ("plan", "code", "flags", "debug")
INFRASTRUCTURE_ERROR = Verdict.infrastructure_error.value


def _debug_left(state: dict[str, Any]) -> bool:
    return state.get("debug_step", 0) < spec_of(state).debug


def after_code(state: dict[str, Any]) -> str:
    return "flags" if state.get("choose_flags") else "compile"


def _debuggable(state: dict[str, Any]) -> bool:
    """A failure the debugger can act on: not an infrastructure error (a GPU worker died or hung twice,
    graph/cluster), which is nothing in the kernel; that attempt is recorded and the round ends."""
    return (state.get("failure") or {}).get("verdict") != INFRASTRUCTURE_ERROR and _debug_left(state)


def after_compile(state: dict[str, Any]) -> str:
    if state.get("compiled"):
        return "verify"
    return "debug" if _debuggable(state) else "round_end"


def after_verify(state: dict[str, Any]) -> str:
    if state.get("failure") is None:
        return "profile"
    return "debug" if _debuggable(state) else "round_end"


def after_round(state: dict[str, Any]) -> str:
    return "plan" if len(state.get("round_log", [])) < spec_of(state).rounds else "finish"


def build_graph(deps: Deps, checkpointer=None):
    r = deps.settings.retry
    llm_retry = RetryPolicy(
        initial_interval=r.initial_interval_s,
        backoff_factor=r.backoff_factor,
        max_interval=r.max_interval_s,
        max_attempts=r.max_attempts,
        jitter=r.jitter,
        retry_on=is_transient,
    )
    g = StateGraph(JobState)
    modules = {
        "baseline": baseline,
        "plan": plan,
        "code": code,
        "flags": flags,
        "compile": compile,
        "verify": verify,
        "debug": debug,
        "profile": profile,
        "filter": filter,
        "round_end": round_end,
        "finish": finish,
    }
    for name, module in modules.items():
        node = (lambda m: lambda state: m.run(state, deps))(module)
        # Only the LLM nodes retry, and only on transient endpoint errors; compile/verify/profile never do.
        g.add_node(name, node, retry_policy=llm_retry if name in LLM_NODES else None)
    g.add_edge(START, "baseline")
    g.add_edge("baseline", "plan")
    g.add_edge("plan", "code")
    g.add_conditional_edges("code", after_code, ["flags", "compile"])
    g.add_edge("flags", "compile")
    g.add_conditional_edges("compile", after_compile, ["verify", "debug", "round_end"])
    g.add_conditional_edges("verify", after_verify, ["profile", "debug", "round_end"])
    g.add_edge("debug", "compile")
    g.add_edge("profile", "filter")
    g.add_edge("filter", "round_end")
    g.add_conditional_edges("round_end", after_round, ["plan", "finish"])
    g.add_edge("finish", END)
    return g.compile(checkpointer=checkpointer)
