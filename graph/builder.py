"""The job's graph:

    START -> baseline -> plan -> code -> [flags] -> compile -> verify -> profile -> filter -> round_end
                                             ^          |          |                            |
                                             |     fail v     fail v                            v
                                             +------- debug (at most D per round)      plan | finish -> END

A compile or verify failure goes to the debugger while the round has debug tries left, else the
round ends with the failure recorded. The next round starts from the best kernel so far.

Spending cap (graph/spending.py): a step that would call an LLM is not entered once the cap is
reached. After the planner the round ends without code; the optional compiler role is skipped (the
coder's kernel, already paid for, is still compiled and verified); a failure goes to round_end
instead of the debugger; no further round starts. round_end then records `stop_reason`.
A call that the cap refuses at the last moment (its exact prompt does not fit what is left,
spending.CapRefused) leaves its node with `spending_refused` set, and the same routing applies: a
refused coder or debugger call ends the round.
"""

from __future__ import annotations

import logging
from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.types import RetryPolicy

from bench_tasks.harness import Verdict

from . import spending
from .deps import Deps
from .llm import is_transient
from .nodes import baseline, code, compile, debug, filter, finish, flags, plan, profile, round_end, verify
from .state import JobState

LLM_NODES = ("plan", "code", "flags", "debug")
INFRASTRUCTURE_ERROR = Verdict.infrastructure_error.value
log = logging.getLogger(__name__)


class Routes:
    """The conditional edges; they read the job's spec from its deps (validated once)."""

    def __init__(self, deps: Deps):
        self.spec = deps.spec

    def capped(self, state: dict[str, Any]) -> bool:
        return bool(state.get("spending_refused")) or spending.reached(self.spec, state.get("llm_calls", []))

    def _debug_or_end(self, state: dict[str, Any]) -> str:
        """Debug a failure the debugger can act on: not an infrastructure error (a GPU worker died or hung
        twice, gpu/ray), which is nothing in the kernel; that attempt is recorded and the round ends."""
        debug_left = state.get("debug_step", 0) < self.spec.debug
        debuggable = (state.get("failure") or {}).get("verdict") != INFRASTRUCTURE_ERROR
        return "debug" if debug_left and debuggable and not self.capped(state) else "round_end"

    def after_plan(self, state: dict[str, Any]) -> str:
        return "round_end" if self.capped(state) else "code"

    def after_code(self, state: dict[str, Any]) -> str:
        if state.get("spending_refused"):
            return "round_end"  # the coder's call was refused: no kernel this round
        return "flags" if state.get("choose_flags") and not self.capped(state) else "compile"

    def after_debug(self, state: dict[str, Any]) -> str:
        return "round_end" if state.get("spending_refused") else "compile"

    def after_compile(self, state: dict[str, Any]) -> str:
        return "verify" if state.get("compiled") else self._debug_or_end(state)

    def after_verify(self, state: dict[str, Any]) -> str:
        return "profile" if state.get("failure") is None else self._debug_or_end(state)

    def after_round(self, state: dict[str, Any]) -> str:
        if state.get("stop_reason") or len(state.get("round_log", [])) >= self.spec.rounds:
            return "finish"
        return "plan"


def _capped_node(module: Any, deps: Deps):
    """An LLM node whose call the spending cap may refuse: the refusal is state (`spending_refused`), not an error."""

    def node(state: dict[str, Any]) -> dict[str, Any]:
        try:
            return module.run(state, deps)
        except spending.CapRefused as refused:
            log.info("job %s: %s", state.get("job_id"), refused)
            return {"spending_refused": True}

    return node


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
    routes = Routes(deps)
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
        node = _capped_node(module, deps) if name in LLM_NODES else (lambda m: lambda state: m.run(state, deps))(module)
        # Only the LLM nodes retry, and only on transient endpoint errors; compile/verify/profile never do.
        g.add_node(name, node, retry_policy=llm_retry if name in LLM_NODES else None)
    g.add_edge(START, "baseline")
    g.add_edge("baseline", "plan")
    g.add_conditional_edges("plan", routes.after_plan, ["code", "round_end"])
    g.add_conditional_edges("code", routes.after_code, ["flags", "compile", "round_end"])
    g.add_edge("flags", "compile")
    g.add_conditional_edges("compile", routes.after_compile, ["verify", "debug", "round_end"])
    g.add_conditional_edges("verify", routes.after_verify, ["profile", "debug", "round_end"])
    g.add_conditional_edges("debug", routes.after_debug, ["compile", "round_end"])
    g.add_edge("profile", "filter")
    g.add_edge("filter", "round_end")
    g.add_conditional_edges("round_end", routes.after_round, ["plan", "finish"])
    g.add_edge("finish", END)
    return g.compile(checkpointer=checkpointer)
