"""What the nodes are given besides the state: settings and the evaluator."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bench_tasks import load_task
from bench_tasks.spec import Variant

from .evaluator import Evaluator
from .settings import AgentSettings, JobSpec


@dataclass
class Deps:
    settings: AgentSettings
    evaluator: Evaluator


def spec_of(state: dict[str, Any]) -> JobSpec:
    return JobSpec.model_validate(state["spec"])


def variant_of(state: dict[str, Any]) -> Variant:
    spec = spec_of(state)
    return load_task(spec.task).variant(spec.precision)
