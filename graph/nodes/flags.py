"""The compiler role (optional, settings.choose_flags / JobSpec.choose_flags): extra nvcc flags from
an allowlist. The compile itself stays deterministic."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from .. import llm, prompting
from ..deps import Deps
from ..kernel_text import parse_flags


class FlagChoice(BaseModel):
    flags: list[str]


def run(state: dict[str, Any], deps: Deps) -> dict[str, Any]:
    user = prompting.render(
        "compiler", strategy=state.get("strategy", ""), source=state.get("source") or "(no code)", allowlist=prompting.flag_allowlist()
    )
    text, record = llm.ask(state, "compiler", prompting.system_prompt("compiler", deps), user, deps, schema=FlagChoice)
    allowed, dropped = parse_flags(text)
    record["note"] = f"dropped flags not on the allowlist: {' '.join(dropped)}" if dropped else ""
    return {"flags": allowed, "llm_calls": [record]}
