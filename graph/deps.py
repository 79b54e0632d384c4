"""What the nodes are given besides the state: settings, the evaluator and the job's spec."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from bench_tasks import load_task
from bench_tasks.spec import Variant
from gpu.protocol import Evaluator
from settings import AgentSettings

from .contract import JobSpec


@dataclass
class Deps:
    settings: AgentSettings
    evaluator: Evaluator
    spec: JobSpec  # validated once, when the job starts or resumes (the state keeps its JSON)

    @cached_property
    def variant(self) -> Variant:
        return load_task(self.spec.task).variant(self.spec.precision)
