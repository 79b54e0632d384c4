"""The debugger: the compile log or the verify verdict plus the source in, a fixed source out."""

from __future__ import annotations

from typing import Any

from .. import llm, prompting
from ..deps import Deps
from ..kernel_text import extract_code


def run(state: dict[str, Any], deps: Deps) -> dict[str, Any]:
    variant = deps.variant
    failure = state.get("failure") or {}
    source = state.get("source") or "(the previous reply had no code; its text is in the log above)"
    user = prompting.render(
        "debugger",
        verdict=failure.get("verdict", ""),
        message=failure.get("message", ""),
        log=(failure.get("log") or "(none)")[-6000:],
        source=source,
        strategy=state.get("strategy", ""),
        prototype=variant.candidate_prototype.c_declaration(),
    )
    text, record = llm.ask(state, "debugger", prompting.system_prompt("debugger", deps), user, deps)
    return {
        "source": extract_code(text, variant.candidate_entry),
        "reply": text,
        "compiled": False,
        "debug_step": state.get("debug_step", 0) + 1,
        "llm_calls": [record],
    }
