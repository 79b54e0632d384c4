"""What the nodes are given besides the state: settings, the evaluator and the job's spec; the evaluator's
requests for this job's task, precision, sizes and profile mode are built here, once."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from bench_tasks import load_task
from bench_tasks.spec import Variant
from gpu.protocol import CompileRequest, EvaluateRequest, Evaluator, ProfileRequest, SanitizeRequest
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

    def compile_request(self, source: str, flags: Sequence[str]) -> CompileRequest:
        return CompileRequest(task=self.spec.task, precision=self.spec.precision, source=source, flags=tuple(flags))

    def evaluate_request(self, source: str | None, flags: Sequence[str] = ()) -> EvaluateRequest:
        """The candidate's (or, with None, the baseline's) evaluation at the job's sizes."""
        return EvaluateRequest(task=self.spec.task, precision=self.spec.precision, source=source, sizes=self.spec.sizes, flags=tuple(flags))

    def sanitize_request(self, source: str | None) -> SanitizeRequest:
        """compute-sanitizer's four tools on the candidate (or the baseline), at the harness's sanitizer sizes."""
        return SanitizeRequest(task=self.spec.task, precision=self.spec.precision, source=source)

    def profile_request(self, source: str | None, rows: list[dict[str, Any]] | None) -> ProfileRequest:
        """The profile of the candidate (or the baseline) in the job's mode; `rows`: its evaluation's rows."""
        return ProfileRequest(
            task=self.spec.task,
            precision=self.spec.precision,
            source=source,
            mode=self.spec.profile_mode,
            rows=tuple(rows) if rows is not None else None,
        )
