"""The coder: the full kernel source for the round's strategy."""

from __future__ import annotations

from typing import Any

from .. import llm, prompting
from ..deps import Deps
from ..kernel_text import extract_code


def run(state: dict[str, Any], deps: Deps) -> dict[str, Any]:
    variant = deps.variant
    user = prompting.render(
        "coder",
        strategy=state.get("strategy", ""),
        **prompting.best_context(state, variant),
        prototype=variant.candidate_prototype.c_declaration(),
    )
    text, record = llm.ask(state, "coder", prompting.system_prompt("coder", deps), user, deps)
    return {"source": extract_code(text, variant.candidate_entry), "reply": text, "flags": [], "compiled": False, "llm_calls": [record]}
